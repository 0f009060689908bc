import type { Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { quoteSchema } from '../../src/names.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor } from '../helpers/http.js'
import { rowFactory } from '../helpers/rows.js'
import { Browser, csrfOf } from './client.js'
import { doomed, greet, JOBS, nightly, report, send } from './fixture.js'

describe('dashboard actions', () => {
  let t: TestSluice
  let app: Hono
  let browser: Browser
  let csrf: string

  const paused = async (queue: string) =>
    (await t.sluice.inspect.queueStates()).find((s) => s.name === queue)?.paused ?? false
  const jobRow = async (id: string) =>
    (await t.sql<{ due: boolean }>('SELECT run_at <= now() AS due FROM $schema.jobs WHERE id = $1', [id]))[0]
  const deadCount = async () =>
    (await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM $schema.dead_letters'))[0]!.n

  beforeAll(async () => {
    t = await makeSluice({ jobs: JOBS, recurring: [nightly] })
    app = appFor(t, { dashboard: true })
    browser = new Browser(app)
    await browser.login()
    csrf = csrfOf(await browser.page('/dashboard/queues'))
  })
  afterAll(() => t.cleanup())
  beforeEach(async () => {
    await t.sql('DELETE FROM $schema.jobs')
    await t.sql('DELETE FROM $schema.dead_letters')
    await t.sluice.resume('default')
  })

  test("a POST without the CSRF token, with a wrong one, or with another session's changes nothing: 403", async () => {
    const other = new Browser(app)
    await other.login()
    const othersToken = csrfOf(await other.page('/dashboard/queues'))
    const forged: Record<string, string>[] = [
      {},
      { _csrf: '' },
      { _csrf: `${csrf.slice(0, -2)}00` },
      { _csrf: othersToken },
    ]
    for (const fields of forged) {
      const res = await browser.post('/dashboard/queues/default/pause', fields)
      expect(res.status).toBe(403)
      expect(await paused('default')).toBe(false)
    }
    // The same form with the page's token works.
    const res = await browser.post('/dashboard/queues/default/pause', {
      _csrf: csrf,
      back: '/dashboard/queues',
    })
    expect(res.status).toBe(303)
    expect(await paused('default')).toBe(true)
  })

  test('a form posted from another site is refused before anything runs', async () => {
    const res = await app.request('http://localhost/dashboard/queues/default/pause', {
      method: 'POST',
      headers: {
        Cookie: browser.cookieHeader,
        Origin: 'https://evil.example',
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    })
    expect(res.status).toBe(403)
    expect(await paused('default')).toBe(false)
  })

  test('pause and resume: a redirect back to the page and a flash message there', async () => {
    const res = await browser.post('/dashboard/queues/default/pause', {
      _csrf: csrf,
      back: '/dashboard/queues',
    })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/dashboard/queues')
    const page = await browser.page('/dashboard/queues')
    expect(page).toMatch(/<p role="status" data-flash[^>]*>Queue default is paused/)
    expect(page).toMatch(/<tr data-queue="default">[\s\S]*?data-action="resume"/)
    // The flash is shown once.
    expect(await browser.page('/dashboard/queues')).not.toContain('data-flash')
    await browser.post('/dashboard/queues/default/resume', { _csrf: csrf })
    expect(await paused('default')).toBe(false)
  })

  test('run now, retry and cancel a job', async () => {
    const { id } = await t.sluice.enqueue(greet, { to: 'a' }, { delay: 3_600_000 })
    expect((await jobRow(id!))?.due).toBe(false)
    await browser.post(`/dashboard/jobs/${id}/run-now`, { _csrf: csrf, back: `/dashboard/jobs/${id}` })
    expect((await jobRow(id!))?.due).toBe(true)
    // Retry of a job that never failed is refused with a message, and changes nothing.
    const refused = await browser.post(`/dashboard/jobs/${id}/retry`, {
      _csrf: csrf,
      back: `/dashboard/jobs/${id}`,
    })
    expect(refused.status).toBe(303)
    expect(await browser.page(`/dashboard/jobs/${id}`)).toMatch(
      /data-flash class="flash error">[^<]*has not failed/,
    )
    const cancel = await browser.post(`/dashboard/jobs/${id}/cancel`, {
      _csrf: csrf,
      back: `/dashboard/jobs/${id}`,
    })
    expect(cancel.headers.get('location')).toBe('/dashboard/jobs')
    expect(await jobRow(id!)).toBeUndefined()
  })

  test('dead letters: retry one, discard by filter; an empty filter is a 400', async () => {
    await t.sluice.enqueue(doomed, { note: 'one' })
    await t.sluice.enqueue(doomed, { note: 'two' })
    await t.sluice.drain({ queues: ['doomed'], budgetMs: 5_000 })
    expect(await deadCount()).toBe(2)
    const [first] = await t.sluice.inspect.deadLetters()
    await browser.post('/dashboard/dead-letters/retry', { _csrf: csrf, ids: first!.id })
    expect(await deadCount()).toBe(1)
    expect((await browser.post('/dashboard/dead-letters/discard', { _csrf: csrf })).status).toBe(400)
    expect(await deadCount()).toBe(1)
    // By filter, it asks first, naming the filter; only the confirmed POST deletes.
    const ask = await browser.post('/dashboard/dead-letters/discard', { _csrf: csrf, queue: 'doomed' })
    expect(ask.status).toBe(200)
    const page = await ask.text()
    expect(page).toContain('<strong>queue doomed</strong>')
    expect(page).toMatch(
      /<input type="hidden" name="queue" value="doomed"><input type="hidden" name="confirm" value="yes"><button type="submit" data-action="confirm-discard"/,
    )
    expect(page).toContain('data-no-refresh>')
    expect(await deadCount()).toBe(1)
    await browser.post('/dashboard/dead-letters/discard', { _csrf: csrf, queue: 'doomed', confirm: 'yes' })
    expect(await deadCount()).toBe(0)
  })

  test('a retry that cannot take its unique key keeps the dead letter and says why in the flash', async () => {
    const holder = (await t.sluice.enqueue(report, { title: 'q4' })).id!
    const rows = rowFactory(t.admin, quoteSchema(t.schema))
    const dead = await rows.deadLetter({ name: 'report', queue: 'reports', payload: { title: 'q4' } })
    const res = await browser.post('/dashboard/dead-letters/retry', {
      _csrf: csrf,
      ids: dead,
      back: '/dashboard/dead-letters',
    })
    expect(res.status).toBe(303)
    expect(await browser.page('/dashboard/dead-letters')).toContain(
      `0 dead letters put back in their queue. 1 kept as dead letter: ${dead} (unique key report:q4 held by job ${holder}).`,
    )
    expect(await deadCount()).toBe(1)
    await t.sql('DELETE FROM $schema.unique_locks')
  })

  test('purge asks first, showing the count; only the confirmed POST deletes', async () => {
    for (const to of ['a', 'b', 'c']) await t.sluice.enqueue(greet, { to })
    const count = async () =>
      (await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM $schema.jobs'))[0]!.n
    const ask = await browser.post('/dashboard/queues/default/purge', {
      _csrf: csrf,
      back: '/dashboard/queues',
    })
    expect(ask.status).toBe(200)
    const page = await ask.text()
    expect(page).toContain('<strong>3 jobs</strong>')
    // The answer to a form: the automatic refresh leaves it alone (a GET of its address is no page).
    expect(page).toContain('data-no-refresh>')
    expect(page).toMatch(
      /<input type="hidden" name="confirm" value="yes"><button type="submit" data-action="confirm-purge"/,
    )
    expect(await count()).toBe(3)
    // The confirmation is a form like any other: without the token, nothing.
    expect((await browser.post('/dashboard/queues/default/purge', { confirm: 'yes' })).status).toBe(403)
    expect(await count()).toBe(3)
    const done = await browser.post('/dashboard/queues/default/purge', {
      _csrf: csrf,
      confirm: 'yes',
      back: '/dashboard/queues',
    })
    expect(done.status).toBe(303)
    expect(await count()).toBe(0)
    expect(await browser.page('/dashboard/queues')).toContain('3 waiting jobs purged from queue default.')
  })

  test('purge does what its confirmation counted: 40,000 jobs in one click, and the flash says so', async () => {
    const count = async () =>
      (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = 'default'`))[0]!
        .n
    const load = async (n: number) => {
      for (let from = 0; from < n; from += 5_000)
        await t.sluice.enqueueMany(
          greet,
          Array.from({ length: 5_000 }, (_, i) => ({ to: `${from + i}` })),
        )
    }
    await load(40_000)
    // A budget no test machine reaches: every chunk runs.
    const patient = new Browser(appFor(t, { dashboard: { actionBudgetMs: 600_000 } }))
    patient.cookies.set('sluice_session', browser.cookies.get('sluice_session')!)
    const purge = (as: Browser, confirm?: 'yes') =>
      as.post('/dashboard/queues/default/purge', {
        _csrf: csrf,
        back: '/dashboard/queues',
        ...(confirm ? { confirm } : {}),
      })
    expect(await (await purge(patient)).text()).toContain('Purge 40,000 jobs</button>')
    expect((await purge(patient, 'yes')).status).toBe(303)
    expect(await count()).toBe(0)
    const flash = await patient.page('/dashboard/queues')
    expect(flash).toContain('40,000 waiting jobs purged from queue default.')
    expect(flash).not.toContain('More remain')

    // With no time to spare, one chunk runs (10,000 jobs, one statement) and the flash says more remain.
    await load(15_000)
    const hurried = new Browser(appFor(t, { dashboard: { actionBudgetMs: 0 } }))
    hurried.cookies.set('sluice_session', browser.cookies.get('sluice_session')!)
    await purge(hurried, 'yes')
    expect(await count()).toBe(5_000)
    expect(await hurried.page('/dashboard/queues')).toContain(
      '10,000 waiting jobs purged from queue default. More remain: the time for one request ran out; purge again to go on.',
    )
  }, 300_000)

  test('bulk cancel and dead-letter discard by filter take every match, chunk after chunk', async () => {
    await t.sluice.enqueueMany(
      greet,
      Array.from({ length: 12_500 }, (_, i) => ({ to: `${i}` })),
      { delay: 3_600_000 },
    )
    await browser.post('/dashboard/jobs/bulk-cancel', {
      _csrf: csrf,
      queue: 'default',
      back: '/dashboard/jobs',
      confirm: 'yes',
    })
    expect((await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM $schema.jobs'))[0]!.n).toBe(0)
    expect(await browser.page('/dashboard/jobs')).toContain('12,500 jobs cancelled.')
    await t.sql(
      `INSERT INTO $schema.dead_letters (id, queue, name, payload, priority, attempts, max_attempts, enqueued_at, failed_at)
       SELECT i, 'doomed', 'doomed', '{}', 16384, 1, 1, now(), now() FROM generate_series(1, 10500) i`,
    )
    await browser.post('/dashboard/dead-letters/discard', {
      _csrf: csrf,
      queue: 'doomed',
      back: '/dashboard/dead-letters',
      confirm: 'yes',
    })
    expect(await deadCount()).toBe(0)
    expect(await browser.page('/dashboard/dead-letters')).toContain('10,500 dead letters discarded.')
  }, 300_000)

  test('bulk retry and cancel act on the current filter; an empty filter is a 400 and changes nothing', async () => {
    const jobs = await Promise.all(
      ['a', 'b'].map((to) => t.sluice.enqueue(greet, { to }, { delay: 3_600_000 })),
    )
    await t.sluice.enqueue(send, { account: 'x' })
    const page = await browser.page('/dashboard/jobs?queue=default&state=scheduled')
    expect(page).toMatch(/data-action="bulk-retry"[\s\S]*data-action="bulk-cancel"/)
    expect((await browser.post('/dashboard/jobs/bulk-cancel', { _csrf: csrf })).status).toBe(400)
    expect(await jobRow(jobs[0]!.id!)).toBeDefined()
    // It asks first, naming the filter: nothing is cancelled yet.
    const ask = await browser.post('/dashboard/jobs/bulk-cancel', {
      _csrf: csrf,
      queue: 'default',
      state: 'scheduled',
    })
    expect(ask.status).toBe(200)
    expect(await ask.text()).toMatch(
      /<strong>queue default, state scheduled<\/strong>[\s\S]*<input type="hidden" name="state" value="scheduled"><input type="hidden" name="confirm" value="yes"><button type="submit" data-action="confirm-bulk-cancel"/,
    )
    expect(await jobRow(jobs[0]!.id!)).toBeDefined()
    const res = await browser.post('/dashboard/jobs/bulk-cancel', {
      _csrf: csrf,
      queue: 'default',
      state: 'scheduled',
      confirm: 'yes',
    })
    expect(res.status).toBe(303)
    expect(await jobRow(jobs[0]!.id!)).toBeUndefined()
    expect(await jobRow(jobs[1]!.id!)).toBeUndefined()
    expect((await t.sluice.inspect.jobs({ queue: 'sends' })).length).toBe(1)
  })

  test('trigger a recurring task now', async () => {
    // Maintenance stores the task (no slot of its schedule is due yet: it starts from now).
    await t.sluice.maintain()
    const res = await browser.post('/dashboard/recurring/nightly/trigger', {
      _csrf: csrf,
      back: '/dashboard/recurring',
    })
    expect(res.status).toBe(303)
    const page = await browser.page('/dashboard/recurring')
    expect(page).toMatch(/data-flash[^>]*>Recurring task nightly triggered: job \d+/)
    // A manual run is no slot of the schedule: the task's last slot stays none.
    const [task] = await t.sluice.inspect.recurring()
    expect(task).toMatchObject({ task: 'nightly', slotEnqueued: false, lastRun: { manual: true } })
    const row = page.slice(page.indexOf('<tr data-recurring="nightly">'))
    expect(row.slice(0, row.indexOf('</tr>'))).toContain('<td><span class="muted">—</span></td>')
    expect((await t.sluice.inspect.jobs({ name: 'greet' })).length).toBe(1)
    const unknown = await browser.post('/dashboard/recurring/nope/trigger', { _csrf: csrf })
    expect(unknown.status).toBe(303)
  })

  test('pause and resume a partition', async () => {
    await t.sluice.enqueue(send, { account: 'acme' })
    await browser.post('/dashboard/policies/send/pause-partition', { _csrf: csrf, partition: 'acme' })
    const [row] = await t.sluice.inspect.partitions('send')
    expect(row).toMatchObject({ partition: 'acme', paused: true, reason: 'partition paused' })
    await browser.post('/dashboard/policies/send/resume-partition', { _csrf: csrf, partition: 'acme' })
    expect((await t.sluice.inspect.partitions('send'))[0]?.paused).toBe(false)
    // An unknown partition is a message, not a failure.
    const res = await browser.post('/dashboard/policies/send/pause-partition', {
      _csrf: csrf,
      partition: 'nope',
    })
    expect(res.status).toBe(303)
  })

  test('every listed partition key can be paused, resumed and capped from its row', async () => {
    const keys = ['', '.', '..', '/', '%', 'a/b', 'ünï cödé ✓']
    for (const account of keys) await t.sluice.enqueue(send, { account })
    const state = async (key: string) =>
      (await t.sluice.inspect.partitions('send')).find((p) => p.partition === key)
    const page = await browser.page('/dashboard/policies/send')
    for (const [i, partition] of keys.entries()) {
      // The row's forms carry the key as a field: pause (or resume) and the cap.
      const fields = page.split(`<input type="hidden" name="partition" value="${partition}">`).length - 1
      expect(fields, JSON.stringify(partition)).toBe(2)
      const paused = await browser.post('/dashboard/policies/send/pause-partition', {
        _csrf: csrf,
        partition,
      })
      expect(paused.status).toBe(303)
      expect(await state(partition)).toMatchObject({ paused: true, capOverride: null })
      await browser.post('/dashboard/policies/send/cap-partition', { _csrf: csrf, partition, cap: String(i) })
      expect(await state(partition)).toMatchObject({ paused: true, capOverride: i })
      // The neighbours are untouched.
      for (const other of keys.slice(i + 1))
        expect(await state(other)).toMatchObject({ paused: false, capOverride: null })
    }
    expect(await browser.page('/dashboard/policies/send')).toContain('runs at most 6 at a time.')
    for (const partition of keys) {
      await browser.post('/dashboard/policies/send/resume-partition', { _csrf: csrf, partition })
      await browser.post('/dashboard/policies/send/cap-partition', { _csrf: csrf, partition, cap: '' })
      expect(await state(partition)).toMatchObject({ paused: false, capOverride: null })
    }
    // A cap that is not a whole number is refused and changes nothing.
    const bad = await browser.post('/dashboard/policies/send/cap-partition', {
      _csrf: csrf,
      partition: '.',
      cap: '1.5',
    })
    expect(bad.status).toBe(400)
    expect(await state('.')).toMatchObject({ capOverride: null })
  })

  test('read-only: no action button is rendered and every action answers 403 and changes nothing', async () => {
    const readOnly = new Browser(appFor(t, { dashboard: { readOnly: true } }))
    await readOnly.login()
    await t.sluice.enqueue(greet, { to: 'b' })
    for (const path of ['/dashboard/queues', '/dashboard/jobs', '/dashboard/dead-letters']) {
      const page = await readOnly.page(path)
      expect(page, path).not.toContain('data-action')
    }
    // A valid session and its token (same secret, so the writable dashboard's session is valid here too).
    readOnly.cookies.set('sluice_session', browser.cookies.get('sluice_session')!)
    const res = await readOnly.post('/dashboard/queues/default/pause', { _csrf: csrf })
    expect(res.status).toBe(403)
    expect(await paused('default')).toBe(false)
  })

  test('a form that is not a form, or too large, is refused', async () => {
    const json = await app.request('http://localhost/dashboard/queues/default/pause', {
      method: 'POST',
      headers: { Cookie: browser.cookieHeader, 'Content-Type': 'application/json' },
      body: JSON.stringify({ _csrf: csrf }),
    })
    expect(json.status).toBe(415)
    const huge = await browser.post('/dashboard/queues/default/pause', {
      _csrf: csrf,
      pad: 'x'.repeat(40_000),
    })
    expect(huge.status).toBe(413)
    expect(await paused('default')).toBe(false)
  })
})
