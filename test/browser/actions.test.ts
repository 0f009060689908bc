/**
 * The dashboard's actions end to end: a click on the page's button, then the database says it
 * happened (and, where it must, that it did not happen before the confirmation).
 */
import type { Page } from 'playwright-core'
import { expect, test } from 'vitest'
import { describeDashboard, watch } from './fixture.js'
import { QUEUES } from './seed.js'

describeDashboard('dashboard actions', (d) => {
  let page: Page
  let problems: string[]

  async function open(path: string): Promise<void> {
    if (!page) {
      const context = await d().loggedIn()
      page = await context.newPage()
      problems = watch(page)
    }
    const response = await page.goto(d().served.url(path))
    expect(response?.status()).toBe(200)
  }

  /** Clicks the button and waits for the page the POST's redirect leads to. */
  async function click(selector: string): Promise<void> {
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.locator(selector).click(),
    ])
    expect(response.status(), `POST ${response.url()}`).toBeLessThan(400)
    await page.waitForLoadState('load')
  }

  const flash = () => page.locator('[data-flash]').first().textContent()

  const job = async (id: string) =>
    (
      await d().seeded.sql<{ queue: string; attempts: number; due: boolean }>(
        `SELECT queue, attempts, run_at <= now() AS due FROM $schema.jobs WHERE id = $1`,
        [id],
      )
    )[0]

  const queueState = async (name: string) =>
    (await d().seeded.sluice.queueStates()).find((q) => q.name === name)

  test('retry a dead letter: the job is back in its queue, due, and gone from the dead letters', async () => {
    const [id] = d().seeded.ids.deadLetters
    await open('/dead-letters')
    await click(`tr[data-dead-letter-id="${id}"] button[data-action="retry"]`)
    expect(await flash()).toBeTruthy()
    expect(await job(id!)).toMatchObject({ queue: 'imports', due: true })
    const left = await d().seeded.sql(`SELECT 1 FROM $schema.dead_letters WHERE id = $1`, [id])
    expect(left).toEqual([])
    expect(await page.locator(`tr[data-dead-letter-id="${id}"]`).count()).toBe(0)
  })

  test('pause a queue: a drain skips it; resume: the next drain runs its job', async () => {
    const { sluice } = d().seeded
    const [waiting] = await d().seeded.sql<{ id: string }>(
      `SELECT id::text FROM $schema.jobs WHERE queue = $1`,
      [QUEUES.pausable],
    )
    await open('/queues')
    await click(`tr[data-queue="${QUEUES.pausable}"] button[data-action="pause"]`)
    expect(await flash()).toBeTruthy()
    expect((await queueState(QUEUES.pausable))?.paused).toBe(true)
    const skipped = await sluice.drain({ queues: [QUEUES.pausable], budgetMs: 2_000 })
    expect(skipped.claimed).toBe(0)
    expect(await job(waiting!.id)).toMatchObject({ attempts: 0 })

    await click(`tr[data-queue="${QUEUES.pausable}"] button[data-action="resume"]`)
    expect((await queueState(QUEUES.pausable))?.paused).toBe(false)
    const ran = await sluice.drain({ queues: [QUEUES.pausable], budgetMs: 5_000 })
    expect(ran.claimed).toBe(1)
    expect(await job(waiting!.id)).toBeUndefined()
  })

  test('purge asks first: nothing is deleted until the confirmation, then the waiting jobs are gone', async () => {
    const count = async () =>
      (
        await d().seeded.sql<{ n: number }>(`SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = $1`, [
          QUEUES.purgeable,
        ])
      )[0]!.n
    expect(await count()).toBe(3)
    await open('/queues')
    await click(`tr[data-queue="${QUEUES.purgeable}"] button[data-action="purge"]`)
    expect(await page.locator('button[data-action="confirm-purge"]').count()).toBe(1)
    expect(await page.locator('main').textContent()).toContain('3')
    expect(await count()).toBe(3)
    await click('button[data-action="confirm-purge"]')
    expect(await flash()).toBeTruthy()
    expect(await count()).toBe(0)
  })

  test('cancel a waiting job from its page: it is deleted', async () => {
    const id = d().seeded.ids.ready[2]!
    await open(`/jobs/${id}`)
    await click('button[data-action="cancel"]')
    expect(await flash()).toBeTruthy()
    expect(await job(id)).toBeUndefined()
  })

  test('run a scheduled job now: it becomes due', async () => {
    const id = d().seeded.ids.scheduled
    expect(await job(id)).toMatchObject({ due: false })
    await open(`/jobs/${id}`)
    await click('button[data-action="run-now"]')
    expect(await flash()).toBeTruthy()
    expect(await job(id)).toMatchObject({ due: true, attempts: 0 })
  })

  test('the keyboard reaches the first action button with Tab, and Enter submits it', async () => {
    await open('/queues')
    const first = page.locator('button[data-action]').first()
    await first.evaluate((b) => b.setAttribute('data-first-action', ''))
    let reached = false
    for (let presses = 0; presses < 300 && !reached; presses++) {
      await page.keyboard.press('Tab')
      reached = await page.evaluate(() => document.activeElement?.hasAttribute('data-first-action') ?? false)
    }
    expect(reached, 'Tab never focused the first action button').toBe(true)
    // Focus is visible: the focused button is drawn with an outline (or a ring) of its own.
    const ring = await page.evaluate(() => {
      const style = getComputedStyle(document.activeElement as Element)
      return style.outlineStyle !== 'none' || style.boxShadow !== 'none'
    })
    expect(ring, 'no visible focus on the action button').toBe(true)
    const posted = page.waitForRequest((r) => r.method() === 'POST')
    await page.keyboard.press('Enter')
    const request = await posted
    expect(new URLSearchParams(request.postData() ?? '').get('_csrf')).toBeTruthy()
    expect((await request.response())?.status()).toBeLessThan(400)
  })

  test('no page of these actions logged an error', () => {
    expect(problems).toEqual([])
  })
})
