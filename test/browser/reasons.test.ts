/**
 * "Why is this not running": each seeded waiting job's row on the jobs page, and each partition's
 * row on its policy page, shows the cause it was seeded with.
 */
import type { Page } from 'playwright-core'
import { beforeAll, expect, test } from 'vitest'
import { describeDashboard } from './fixture.js'
import { QUEUES } from './seed.js'

describeDashboard('why a job is not running', (d) => {
  let page: Page
  beforeAll(async () => {
    page = await (await d().loggedIn()).newPage()
  })

  async function reasonOf(queue: string, id: string): Promise<string> {
    await page.goto(d().served.url(`/jobs?queue=${encodeURIComponent(queue)}`))
    const cell = page.locator(`tr[data-job-id="${id}"] td[data-reason]`)
    expect(await cell.count(), `job ${id} of queue ${queue} has a row with a reason cell`).toBe(1)
    return ((await cell.textContent()) ?? '').trim()
  }

  test.each([
    ['not due', 'default', () => d().seeded.ids.scheduled, /^not due for another \d+ (min|h)$/],
    ['retrying', 'sync', () => d().seeded.ids.retrying, /^retrying in \d+ (min|h) \(attempt 2 of 3\)$/],
    ['queue paused', QUEUES.paused, () => d().seeded.ids.paused, /^queue paused/],
    [
      'breaker open',
      QUEUES.breaker,
      () => d().seeded.ids.breakerOpen,
      /^breaker open for another \d+ (min|h)$/,
    ],
    ['throttled', QUEUES.webhooks, () => d().seeded.ids.throttled, /^throttled: next token in \d/],
    ['partition at its cap', QUEUES.partner, () => d().seeded.ids.atCap, /^partition at its cap 1\/1/],
    [
      'blocked behind a key',
      QUEUES.billing,
      () => d().seeded.ids.blockedBehindKey,
      /^blocked behind key customer:c1\b/,
    ],
  ])('%s', async (_, queue, id, reason) => {
    expect(await reasonOf(queue, id())).toMatch(reason)
  })

  test('held by the single consumer that holds its queue', async () => {
    const { ids, invocation } = d().seeded
    expect(await reasonOf(QUEUES.ledger, ids.heldBySingleConsumer)).toMatch(
      new RegExp(`^held by single consumer ${invocation}`),
    )
  })

  test('a running job says so, and a ready job has no reason', async () => {
    const [running] = d().seeded.ids.running
    expect(await reasonOf(QUEUES.ledger, running!)).toMatch(/^running/)
    expect(await reasonOf('default', d().seeded.ids.ready[0]!)).toBe('')
  })

  test('partition rows on their policy page say why their next job waits', async () => {
    await page.goto(d().served.url('/policies/partner-call'))
    expect(
      ((await page.locator('tr[data-partition="globex"] td[data-reason]').textContent()) ?? '').trim(),
    ).toBe('partition at its cap 1/1')
    await page.goto(d().served.url('/policies/deliver-webhook'))
    expect(
      (await page.locator('tr[data-partition="hooks.example.com"] td[data-reason]').textContent())?.trim(),
    ).toMatch(/^throttled: next token in \d/)
  })
})
