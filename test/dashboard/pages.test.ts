import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor } from '../helpers/http.js'
import { Browser } from './client.js'
import { charge, doomed, greet, HOSTILE, JOBS, NAV, nightly, report, SUBSCRIBERS, send } from './fixture.js'

describe('dashboard pages', () => {
  let t: TestSluice
  let app: Hono
  let browser: Browser
  let jobId: string
  let batchId: string

  beforeAll(async () => {
    t = await makeSluice({
      jobs: JOBS,
      subscribers: SUBSCRIBERS,
      recurring: [nightly],
      queues: { doomed: { archive: false } },
    })
    app = appFor(t, { dashboard: true })
    // Hostile text everywhere an operator's page shows stored data.
    await t.sluice.enqueue(doomed, { note: HOSTILE })
    await t.sluice.drain({ queues: ['doomed'], budgetMs: 5_000 })
    jobId = (await t.sluice.enqueue(greet, { to: HOSTILE })).id!
    await t.sluice.enqueue(send, { account: HOSTILE })
    batchId = (await t.sluice.createBatch({ properties: { note: HOSTILE } })).id
    await t.sluice.pause('sends')
    await t.sluice.enqueue(report, { title: HOSTILE })
    for (let i = 0; i < 3; i++) await t.sluice.enqueue(charge, { account: 'acme' })
    await t.sluice.publish('orders.created', { n: 1 })
    browser = new Browser(app)
    expect((await browser.login()).status).toBe(303)
  })
  afterAll(() => t.cleanup())

  const paths = () => [
    ...NAV,
    `/jobs/${jobId}`,
    `/jobs?queue=default&state=waiting`,
    `/batches?id=${batchId}`,
    `/policies/send`,
    '/insights?window=24h',
  ]

  test('every page answers 200 with the common frame: main, nav to every page, h1, theme toggle, refresh choices', async () => {
    for (const path of paths()) {
      const page = await browser.page(`/dashboard${path === '/' ? '' : path}`)
      expect(page, path).toContain('<main id="main"')
      expect(page, path).toMatch(/<h1>[^<]+<\/h1>/)
      expect(page, path).toContain('<button type="button" data-theme-toggle')
      const choices = [...page.matchAll(/<option value="(\d+)"/g)].map((m) => m[1])
      expect(choices.slice(0, 4), path).toEqual(['0', '2', '5', '15'])
      expect(page, path).toContain('<select data-refresh')
      for (const link of NAV) expect(page, `${path} links to ${link}`).toContain(`href="/dashboard${link}"`)
    }
    // The trailing-slash form of the dashboard's path is the overview too.
    expect(await browser.page('/dashboard/')).toContain('<h1>Overview</h1>')
  })

  test('stored text is shown as text: a <script> in a payload, an error or a partition key never becomes markup', async () => {
    const escaped = '&lt;script&gt;alert('
    const shown: string[] = []
    for (const path of paths()) {
      const page = await browser.page(`/dashboard${path}`)
      expect(page, path).not.toContain('<script>alert')
      expect(page, path).not.toContain('<img src=x')
      if (page.includes(escaped) || page.includes('\\u003cscript\\u003ealert')) shown.push(path)
    }
    // The hostile text is there (escaped) where it is stored: job, dead letter, batch, partition.
    expect(shown).toEqual(
      expect.arrayContaining([
        `/jobs/${jobId}`,
        '/dead-letters',
        `/batches?id=${batchId}`,
        '/policies/send',
        '/locks',
      ]),
    )
  })

  test('the overview shows the depth of each queue, the dead letters and the last hour from one statement', async () => {
    t.statements.reset()
    const page = await browser.page('/dashboard')
    // inspect.overview(), the queues' states (to mark paused ones) and the session's logout check.
    expect(t.statements.count).toBe(3)
    const row = (queue: string) =>
      new RegExp(`<tr data-queue="${queue}"[^>]*>([\\s\\S]*?)</tr>`).exec(page)?.[1] ?? ''
    const cells = (queue: string) =>
      [...row(queue).matchAll(/<td class="num">([^<]*)<\/td>/g)].map((m) => m[1])
    // Ready, scheduled, retrying, running, blocked, oldest ready.
    expect(cells('default').slice(0, 5)).toEqual(['1', '0', '0', '0', '0'])
    expect(cells('sends').slice(0, 5)).toEqual(['1', '0', '0', '0', '0'])
    // A paused queue is marked beside its name; a running one is not.
    expect(page).toMatch(
      /<tr data-queue="sends" data-paused><th[^>]*>.*<span class="badge paused">paused<\/span><\/th>/,
    )
    expect(page).toContain('<tr data-queue="default">')
    expect(page).toMatch(/<span>Dead letters<\/span><strong><a [^>]*>1<\/a>/)
    expect(page).toMatch(/<span>Failures, last hour<\/span><strong>1<\/strong>/)
    expect(page).toContain('<script type="application/json" id="throughput-data">[{"minute":')
  })

  test('locks and events: each one statement, showing locks, semaphores, subscribers and the outbox', async () => {
    t.statements.reset()
    const locks = await browser.page('/dashboard/locks')
    // The page's statement and the session's logout check.
    expect(t.statements.count).toBe(2)
    expect(locks).toMatch(/<tr data-lock="report:&lt;script&gt;[^"]*">[\s\S]*?until-executed/)
    expect(locks).toMatch(/<tr data-semaphore="acct:acme">[\s\S]*?1\/1<\/td>\s*<td class="num">2<\/td>/)
    t.statements.reset()
    const events = await browser.page('/dashboard/events')
    expect(t.statements.count).toBe(2)
    expect(events).toMatch(/<tr data-subscriber="audit">[\s\S]*?orders\.#[\s\S]*?<td class="num">1<\/td>/)
    expect(events).toContain('Outbox pending')
  })

  test('job rows carry id, state and why they are not running', async () => {
    const page = await browser.page('/dashboard/jobs?queue=sends')
    const row = /<tr data-job-id="(\d+)" data-state="(\w+)">[\s\S]*?<td data-reason>([^<]*)<\/td>/.exec(page)
    expect(row?.[2]).toBe('waiting')
    expect(row?.[3]).toBe('queue paused')
    const partition = await browser.page('/dashboard/policies/send')
    expect(partition).toMatch(/<tr data-partition="&lt;script&gt;[^"]*">/)
    expect(partition).toMatch(/<td data-reason>queue paused<\/td>/)
  })

  test('the jobs list filters by enqueue time (datetime-local fields read as UTC, or ISO with a zone)', async () => {
    const ids = async (query: string) =>
      [
        ...(await browser.page(`/dashboard/jobs?queue=default&${query}`)).matchAll(
          /<tr data-job-id="(\d+)"/g,
        ),
      ].map((m) => m[1])
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString().slice(0, 16)
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString().slice(0, 16)
    expect(await ids(`since=${hourAgo}`)).toEqual([jobId])
    expect(await ids(`since=${inAnHour}`)).toEqual([])
    expect(await ids(`until=${hourAgo}`)).toEqual([])
    expect(await ids(`since=${encodeURIComponent(`${hourAgo}:00+00:00`)}&until=${inAnHour}`)).toEqual([jobId])
    // The form shows the filter back, and bulk actions step aside while a time filter narrows the list.
    const page = await browser.page(`/dashboard/jobs?queue=default&since=${hourAgo}`)
    expect(page).toContain(`name="since" step="1" value="${hourAgo}:00"`)
    expect(page).not.toContain('data-action="bulk-cancel"')
    expect((await browser.get('/dashboard/jobs?since=yesterday')).status).toBe(400)
    expect((await browser.get('/dashboard/jobs?until=2026-02-30T10:00')).status).toBe(400)
  })

  test('queue rows, dead letter rows and action buttons follow the page contract', async () => {
    const queues = await browser.page('/dashboard/queues')
    expect(queues).toContain('<tr data-queue="sends">')
    expect(queues).toMatch(/<tr data-queue="sends">[\s\S]*?data-action="resume"/)
    expect(queues).toMatch(/<tr data-queue="default">[\s\S]*?data-action="pause"/)
    // A queue that keeps no archive says so; the others say nothing.
    expect(queues).toMatch(
      /<tr data-queue="doomed"><th scope="row"><a [^>]*>doomed<\/a> <span [^>]*>\(no archive\)/,
    )
    expect(queues.match(/\(no archive\)/g)).toHaveLength(1)
    const dead = await browser.page('/dashboard/dead-letters')
    expect(dead).toMatch(
      /<tr data-dead-letter-id="\d+">[\s\S]*?data-action="retry"[\s\S]*?data-action="discard"/,
    )
  })

  test('an unknown job is a 404 page and a malformed id a 400, both HTML', async () => {
    const missing = await browser.get('/dashboard/jobs/999999')
    expect(missing.status).toBe(404)
    expect(missing.headers.get('content-type')).toMatch(/^text\/html/)
    const bad = await browser.get('/dashboard/jobs/abc')
    expect(bad.status).toBe(400)
    expect(await bad.text()).toContain('Invalid job id')
    expect((await browser.get('/dashboard/jobs?state=nope')).status).toBe(400)
    // Shown to a signed-in operator with the frame of any page: no read-only badge on a dashboard
    // that is not, the log-out there, and no automatic refresh of the error.
    for (const page of [await missing.text(), await (await browser.get('/dashboard/nope')).text()]) {
      expect(page).toContain('<nav')
      expect(page).not.toContain('>read-only<')
      expect(page).toMatch(/action="\/dashboard\/logout"[\s\S]*name="_csrf" value="[0-9a-f]{64}"/)
      expect(page).toContain('<body data-default-refresh="0" data-no-refresh>')
    }
    expect(await browser.page('/dashboard/jobs')).toContain('<body data-default-refresh="0">')
  })

  test('a dead letter and an archived job have their own pages: state, when it ended, attempts, fitting actions', async () => {
    const [dead] = await t.sluice.inspect.deadLetters({ queue: 'doomed' })
    const list = await browser.page('/dashboard/dead-letters')
    expect(list).toContain(`<a href="/dashboard/jobs/${dead!.id}">${dead!.id}</a>`)
    const deadPage = await browser.page(`/dashboard/jobs/${dead!.id}`)
    expect(deadPage).toContain('data-state="dead"')
    expect(deadPage).toContain('Dead-lettered')
    expect(deadPage).toMatch(/<tr data-attempt="1" data-outcome="failed">/)
    expect(deadPage).toMatch(/data-action="retry"[\s\S]*data-action="discard"/)
    expect(deadPage).not.toContain('Why not running')

    const done = (await t.sluice.enqueue(report, { title: 'archived' })).id!
    await t.sluice.drain({ queues: ['reports'], budgetMs: 5_000 })
    const donePage = await browser.page(`/dashboard/jobs/${done}`)
    expect(donePage).toContain('data-state="completed"')
    expect(donePage).toMatch(/<tr data-attempt="1" data-outcome="completed">/)
    expect(donePage).not.toContain('data-action=')
  })

  // Last: it deletes the policy's rows.
  test('an unknown policy is a 404 page; a known one with no partition yet, a page that says so', async () => {
    const missing = await browser.get('/dashboard/policies/nope')
    expect(missing.status).toBe(404)
    expect(await missing.text()).toContain('No admission policy nope')
    expect((await browser.get('/dashboard/policies/nope?offset=100')).status).toBe(404)
    // A policy's page before its first enqueue: its job is defined with one.
    await t.sql('DELETE FROM $schema.partitions')
    await t.sql('DELETE FROM $schema.policies')
    expect(await browser.page('/dashboard/policies/send')).toContain('No partition yet')
  })
})
