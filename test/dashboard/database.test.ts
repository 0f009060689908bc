import pg from 'pg'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, bearer } from '../helpers/http.js'
import { Browser } from './client.js'
import { greet, JOBS } from './fixture.js'

let t: TestSluice
let browser: Browser

beforeAll(async () => {
  t = await makeSluice({ jobs: JOBS })
  // Warn about any transaction held open, however briefly: the test cannot wait a minute.
  browser = new Browser(appFor(t, { dashboard: { horizonWarning: { heldMs: 0 } } }))
  await browser.login()
})
afterAll(() => t.cleanup())

/** The database page once `accept` holds, polled for at most 30 s. */
async function pageWhen(accept: (page: string) => boolean): Promise<string> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const page = await browser.page('/dashboard/database')
    if (accept(page) || Date.now() > deadline) return page
    await new Promise((r) => setTimeout(r, 100))
  }
}

test('the database page lists the tables and warns while a transaction holds the horizon over dead jobs', async () => {
  const held = new pg.Client({ connectionString: databaseUrl, application_name: 'dashboard-held-open' })
  await held.connect()
  try {
    await held.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
    const pid = Number((await held.query('SELECT pg_backend_pid() AS pid')).rows[0].pid)
    await t.sluice.enqueueMany(
      greet,
      Array.from({ length: 20 }, (_, i) => ({ to: `n${i}` })),
    )
    while ((await t.sluice.drain({ queues: ['default'] })).completed > 0) {}

    const ours = (page: string) =>
      new RegExp(`<p role="alert" data-xmin-warning[^>]*>[^<]*pid ${pid} `).test(page)
    const during = await pageWhen(ours)
    expect(ours(during)).toBe(true)
    expect(during).toContain('<tr data-table="jobs">')
    expect(during).toContain('dashboard-held-open')
    // Its SQL text only where the app is configured to show it, on the page and the admin API.
    expect(during).not.toContain('SELECT pg_backend_pid()')
    const showing = appFor(t, { dashboard: { horizonWarning: { heldMs: 0 } }, showSessionQueries: true })
    const shown = new Browser(showing)
    await shown.login()
    expect(await shown.page('/dashboard/database')).toContain('SELECT pg_backend_pid() AS pid')
    const api = async (app: ReturnType<typeof appFor>) => {
      const res = await app.request('/api/v1/database', { headers: bearer() })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { horizon: { pid: number | null; query: string | null }[] }
      return body.horizon.find((h) => h.pid === pid)
    }
    expect(await api(appFor(t))).toMatchObject({ pid, query: null })
    expect(await api(showing)).toMatchObject({ pid, query: 'SELECT pg_backend_pid() AS pid' })

    await held.query('COMMIT')
    const after = await pageWhen((page) => !page.includes('dashboard-held-open'))
    expect(ours(after)).toBe(false)
    expect(after).not.toContain('dashboard-held-open')
  } finally {
    await held.end()
  }
})

test('bad warning thresholds are refused when the app is built', () => {
  expect(() => appFor(t, { dashboard: { horizonWarning: { heldMs: -1 } } })).toThrow(/horizonWarning/)
})

test('row counts are labelled as estimates; bloat is flagged only on a table past the size floor', async () => {
  const page = await browser.page('/dashboard/database')
  expect(page).toContain('Live rows (est.)')
  expect(page).toContain('data-estimates')
  // The test's tables are far below 8 MiB: whatever their dead rows, none is flagged.
  expect(page).toContain('<tr data-table="jobs">')
  expect(page).not.toContain('data-bloated')
})
