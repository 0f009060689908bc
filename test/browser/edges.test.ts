/**
 * The rough edges an operator saw, each checked in a real browser: the log-in page's frame,
 * paused queues, the Retrying column, names that do not wrap, a long partition key that does, reasons in relative time, a
 * recurring task that never fired, routed events counted, estimates labelled, bloat flagged only
 * past a size floor, and the list of recent batches.
 */
import type { Page } from 'playwright-core'
import { beforeAll, expect, test } from 'vitest'
import { newContext } from './chromium.js'
import { describeDashboard } from './fixture.js'
import { QUEUES } from './seed.js'

describeDashboard('the dashboard rough edges', (d) => {
  let page: Page
  beforeAll(async () => {
    page = await (await d().loggedIn({ viewport: { width: 1280, height: 800 } })).newPage()
  })

  const text = async (selector: string): Promise<string> =>
    ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ').trim()

  test('the log-in page shows a visitor no navigation, refresh selector or read-only badge', async () => {
    const context = await newContext(d().browser)
    const visitor = await context.newPage()
    await visitor.goto(d().served.url('/login'))
    const frame = await visitor.evaluate(() => ({
      nav: document.querySelectorAll('nav').length,
      refresh: document.querySelectorAll('select[data-refresh]').length,
      badges: Array.from(document.querySelectorAll('header .badge'), (b) => b.textContent),
      secret: document.querySelectorAll('input[name="secret"]').length,
    }))
    expect(frame).toEqual({ nav: 0, refresh: 0, badges: [], secret: 1 })
    await context.close()
    // Logged in, the frame is there.
    await page.goto(d().served.url('/'))
    expect(await page.locator('nav a').count()).toBeGreaterThan(5)
  })

  test('the overview marks a paused queue, and a queue whose breaker is open', async () => {
    await page.goto(d().served.url('/'))
    const paused = page.locator(`tr[data-queue="${QUEUES.paused}"]`)
    expect(await paused.getAttribute('data-paused')).not.toBeNull()
    expect(await paused.locator('th .badge').textContent()).toBe('paused')
    expect(await page.locator(`tr[data-queue="${QUEUES.breaker}"] th .badge`).textContent()).toBe(
      'breaker open',
    )
    expect(await page.locator('tr[data-queue="default"]').getAttribute('data-paused')).toBeNull()
  })

  test('the Queues page has a Retrying column: a retrying job is not counted under Scheduled', async () => {
    await page.goto(d().served.url('/queues'))
    const headers = await page.locator('thead th').allTextContents()
    const column = (name: string) => headers.indexOf(name)
    expect(column('Retrying')).toBe(column('Scheduled') + 1)
    const cells = await page.locator('tr[data-queue="sync"] > *').allTextContents()
    expect(cells[column('Retrying')]?.trim()).toBe('1')
    expect(cells[column('Scheduled')]?.trim()).toBe('0')
    // A job enqueued with a delay is scheduled, not retrying.
    const defaults = await page.locator('tr[data-queue="default"] > *').allTextContents()
    expect(defaults[column('Scheduled')]?.trim()).toBe('1')
    expect(defaults[column('Retrying')]?.trim()).toBe('0')
  })

  test('job names do not wrap: 100 rows stay one line each', async () => {
    const { sluice } = d().seeded
    await sluice.enqueueMany(
      'send-email',
      Array.from({ length: 100 }, (_, i) => ({ to: `bulk${i}@example.com` })),
      { delay: 3_600_000 },
    )
    for (const width of [1280, 360]) {
      await page.setViewportSize({ width, height: 800 })
      await page.goto(d().served.url('/jobs?name=send-email&state=scheduled'))
      const shape = await page.evaluate(() => {
        const rows = Array.from(document.querySelectorAll('tr[data-job-id]'))
        const lines = (cell: Element) => {
          const range = document.createRange()
          range.selectNodeContents(cell)
          return new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size
        }
        return {
          rows: rows.length,
          wrapped: rows.filter((r) => lines(r.children[1]!) > 1).length,
          tallest: Math.max(...rows.map((r) => r.getBoundingClientRect().height)),
          height: document.documentElement.scrollHeight,
        }
      })
      expect(shape.rows, `${width} px`).toBe(100)
      expect(shape.wrapped, `${width} px: names on more than one line`).toBe(0)
      expect(shape.tallest, `${width} px: the tallest row`).toBeLessThan(60)
      expect(shape.height, `${width} px: the page's height`).toBeLessThan(100 * 60 + 600)
    }
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  test("a 200-character partition key wraps in its cell: the policy's table is no wider for it", async () => {
    const { sluice } = d().seeded
    const tableWidth = async (width: number): Promise<number> => {
      await page.setViewportSize({ width, height: 800 })
      await page.goto(d().served.url('/policies/deliver-webhook'))
      return page.evaluate(() => document.querySelector('tr[data-partition]')!.closest('table')!.scrollWidth)
    }
    const before = [await tableWidth(1280), await tableWidth(360)]
    const key = `tenant-${'x'.repeat(193)}`
    await sluice.enqueue('deliver-webhook', { endpoint: key, n: 1 }, { delay: 3_600_000 })
    for (const [i, width] of [1280, 360].entries()) {
      expect(await tableWidth(width), `${width} px: the table's width`).toBeLessThanOrEqual(before[i]! + 2)
      const keyCell = page.locator(`tr[data-partition="${key}"] > th`)
      expect((await keyCell.boundingBox())!.height, `${width} px: the key wraps`).toBeGreaterThan(30)
    }
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  test('reasons give relative times, the exact time on hover in a <time datetime title>', async () => {
    await page.goto(d().served.url('/jobs?queue=sync'))
    const cell = page.locator(`tr[data-job-id="${d().seeded.ids.retrying}"] td[data-reason]`)
    expect(((await cell.textContent()) ?? '').trim()).toMatch(/^retrying in \d+ (min|h) \(attempt 2 of 3\)$/)
    const time = cell.locator('time')
    const iso = await time.getAttribute('datetime')
    expect(iso).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(await time.getAttribute('title')).toBe(iso)
    expect(await cell.textContent()).not.toContain(iso!.slice(0, 10))
  })

  test('a recurring task that never fired shows no last slot beside "never"', async () => {
    await page.goto(d().served.url('/recurring'))
    const headers = await page.locator('thead th').first().locator('xpath=..').locator('th').allTextContents()
    const cells = await page.locator('tr[data-recurring="nightly"] > *').allTextContents()
    expect(cells[headers.indexOf('Last run')]?.trim()).toBe('never')
    expect(cells[headers.indexOf('Last slot')]?.trim()).toBe('—')
  })

  test('Events counts the events published and routed in the last hour, not only the outbox', async () => {
    await page.goto(d().served.url('/events'))
    // Two events published directly to the subscriber; the outbox's one is still pending.
    expect(await text('[data-published] strong')).toBe('2')
  })

  test('the database page labels the row counts as estimates and flags bloat only past the size floor', async () => {
    await page.goto(d().served.url('/database'))
    const headers = await page.locator('[aria-label="Tables"] thead th').allTextContents()
    expect(headers).toEqual(expect.arrayContaining(['Live rows (est.)', 'Dead rows (est.)']))
    expect(await text('[data-estimates]')).toMatch(/estimates/)
    // The seeded tables are kilobytes: none is flagged, whatever their share of dead rows.
    expect(await page.locator('tr[data-table] td.warn, [data-bloated]').count()).toBe(0)
  })

  test('the Insights "Wait avg / p95" tile stays on one line', async () => {
    await page.goto(d().served.url('/insights'))
    const lines = await page.evaluate(() => {
      const tile = Array.from(document.querySelectorAll('.tile')).find((t) =>
        t.querySelector('span')?.textContent?.startsWith('Wait'),
      )
      const strong = tile?.querySelector('strong')
      if (!strong) return -1
      const range = document.createRange()
      range.selectNodeContents(strong)
      return new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size
    })
    expect(lines).toBe(1)
  })

  test('the Batches page lists recent batches, each linking to its own view', async () => {
    await page.goto(d().served.url('/batches'))
    const row = page.locator(`tr[data-batch-id="${d().seeded.ids.batch}"]`)
    expect(await row.count()).toBe(1)
    await row.locator('a').click()
    await page.waitForURL(/batches\?id=/)
    expect(await page.locator('h2', { hasText: 'Properties' }).count()).toBe(1)
    await page.goto(d().served.url('/batches?limit=1&before=1'))
    expect(await page.locator('tr[data-batch-id]').count()).toBe(0)
  })
})
