import type { Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, PermanentJobError } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, bearer, errorOf } from '../helpers/http.js'

const greet = defineJob({ name: 'greet', input: z.object({ to: z.string() }), run: () => {} })
const doomed = defineJob({
  name: 'doomed',
  queue: 'doomed',
  input: z.object({ n: z.number() }),
  run: () => {
    throw new PermanentJobError('never')
  },
})
const shaky = defineJob({
  name: 'shaky',
  queue: 'shaky',
  input: z.object({}),
  retry: { maxAttempts: 3, baseDelayMs: 3_600_000 },
  run: async () => {
    await new Promise((r) => setTimeout(r, 20))
    throw new Error('upstream said no')
  },
})
const send = defineJob({
  name: 'send',
  queue: 'sends',
  input: z.object({ account: z.string() }),
  admission: { partition: (i) => i.account, concurrency: { max: 2 } },
  run: () => {},
})

describe('the admin API', () => {
  let t: TestSluice
  let app: Hono

  const get = async (path: string) => {
    const res = await app.request(path, { headers: bearer() })
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown> & { error: { code: string; message: string } },
    }
  }
  const send_ = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      headers: { ...bearer(), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    })
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown> & { error: { code: string; message: string } },
    }
  }
  const post = (path: string, body?: unknown) => send_('POST', path, body)
  const jobs = () =>
    t.sql<{ id: string; run_at: Date }>('SELECT id::text, run_at FROM $schema.jobs ORDER BY id')
  const deadIds = async () =>
    (await t.sql<{ id: string }>('SELECT id::text FROM $schema.dead_letters ORDER BY id')).map((r) => r.id)

  beforeAll(async () => {
    t = await makeSluice({ jobs: [greet, doomed, send, shaky] })
    app = appFor(t)
  })
  afterAll(() => t.cleanup())
  beforeEach(async () => {
    await t.sql('DELETE FROM $schema.jobs')
    await t.sql('DELETE FROM $schema.dead_letters')
  })

  test('GET /jobs pages by id with a cursor and filters by queue, name and state', async () => {
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await t.sluice.enqueue(greet, { to: `p${i}` }))!.id!)
    const later = (await t.sluice.enqueue(greet, { to: 'later' }, { delay: 3_600_000 })).id!
    const first = await get('/api/v1/jobs?limit=2')
    expect(first.status).toBe(200)
    expect((first.body.jobs as { id: string }[]).map((j) => j.id)).toEqual(ids.slice(0, 2))
    expect(first.body.nextCursor).toBe(ids[1])
    const second = await get(`/api/v1/jobs?limit=2&cursor=${first.body.nextCursor}`)
    expect((second.body.jobs as { id: string }[]).map((j) => j.id)).toEqual(ids.slice(2, 4))
    const rest = await get(`/api/v1/jobs?limit=5&cursor=${second.body.nextCursor}`)
    expect((rest.body.jobs as { id: string }[]).map((j) => j.id)).toEqual([ids[4], later])
    expect(rest.body.nextCursor).toBeNull()
    const scheduled = await get('/api/v1/jobs?state=scheduled&queue=default&name=greet')
    expect(scheduled.body.jobs).toEqual([
      expect.objectContaining({ id: later, state: 'scheduled', payload: { to: 'later' }, attempts: 0 }),
    ])
    expect((await get('/api/v1/jobs?queue=sends')).body.jobs).toEqual([])
  })

  test('inspect.jobs, inspect.job and the job controls send one statement each', async () => {
    const id = (await t.sluice.enqueue(greet, { to: 'x' }, { delay: 3_600_000 })).id!
    const counted = async (work: () => Promise<unknown>) => {
      t.statements.reset()
      await work()
      return t.statements.count
    }
    expect(
      await counted(() => t.sluice.inspect.jobs({ state: 'scheduled', queue: 'default', after: '1' })),
    ).toBe(1)
    expect(await counted(() => t.sluice.inspect.job(id))).toBe(1)
    expect(await counted(() => t.sluice.runJobNow(id))).toBe(1)
    expect(await counted(() => t.sluice.cancelJob(id))).toBe(1)
  })

  test('GET /jobs/:id returns the job with its errors; 404 when it is not there', async () => {
    const id = (await t.sluice.enqueue(greet, { to: 'x' })).id!
    const got = await get(`/api/v1/jobs/${id}`)
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({ id, name: 'greet', state: 'waiting', errors: [] })
    const missing = await get('/api/v1/jobs/999999999')
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe('NOT_FOUND')
  })

  test('GET /jobs/:id has the attempts timeline: start, end, duration, drain invocation and error of each', async () => {
    const id = (await t.sluice.enqueue(shaky, {})).id!
    const first = await t.sluice.drain({ queues: ['shaky'], maxJobs: 1 })
    expect(first.failed + first.retried).toBeGreaterThanOrEqual(1)
    const got = await get(`/api/v1/jobs/${id}`)
    expect(got.status).toBe(200)
    const timeline = got.body.timeline as {
      attempt: number
      outcome: string
      startedAt: string
      endedAt: string
      durationMs: number
      invocation: string
      error: { name: string; message: string }
    }[]
    expect(timeline).toHaveLength(1)
    const [a] = timeline
    expect(a).toMatchObject({
      attempt: 1,
      outcome: 'failed',
      error: { name: 'Error', message: 'upstream said no' },
    })
    expect(a!.durationMs).toBeGreaterThanOrEqual(15)
    expect(new Date(a!.endedAt).getTime() - new Date(a!.startedAt).getTime()).toBe(a!.durationMs)
    expect(a!.invocation).toMatch(/\S/)
    expect(await t.sluice.inspect.job(id)).toMatchObject({ timeline })
  })

  test('run-now makes a scheduled job due; retry wants a failed one; both refuse a running job', async () => {
    const id = (await t.sluice.enqueue(greet, { to: 'x' }, { delay: 3_600_000 })).id!
    const retry = await post(`/api/v1/jobs/${id}/retry`)
    expect(retry.status).toBe(409)
    expect((await jobs())[0]!.run_at.getTime()).toBeGreaterThan(Date.now() + 3_000_000)
    expect((await post(`/api/v1/jobs/${id}/run-now`)).status).toBe(200)
    expect((await jobs())[0]!.run_at.getTime()).toBeLessThanOrEqual(Date.now() + 1000)
    // A failed job waiting for its retry: retry makes it due.
    await t.sql(`UPDATE $schema.jobs SET attempts = 1, run_at = now() + interval '1 hour'`)
    expect((await post(`/api/v1/jobs/${id}/retry`)).status).toBe(200)
    expect((await jobs())[0]!.run_at.getTime()).toBeLessThanOrEqual(Date.now() + 1000)
    // Leased by a drain: nothing changes.
    await t.sql(`UPDATE $schema.jobs SET lease_token = gen_random_uuid(), run_at = now() + interval '1 hour'`)
    const before = await jobs()
    for (const verb of ['retry', 'run-now', 'cancel']) {
      const res = await post(`/api/v1/jobs/${id}/${verb}`)
      expect(res.status, verb).toBe(409)
      expect(res.body.error.code).toBe('CONFLICT')
    }
    expect(await jobs()).toEqual(before)
    expect((await post('/api/v1/jobs/999999999/run-now')).status).toBe(404)
  })

  test('cancel deletes a waiting job and its uniqueness lock; refuses a job of a batch', async () => {
    const id = (await t.sluice.enqueue(greet, { to: 'x' })).id!
    await t.sql(
      `INSERT INTO $schema.unique_locks (key, job_id, strategy, state, expires_at)
       VALUES ('k', $1, 'until-executed', 'queued', now() + interval '1 hour')`,
      [id],
    )
    expect((await post(`/api/v1/jobs/${id}/cancel`)).status).toBe(200)
    expect(await jobs()).toEqual([])
    expect(await t.sql('SELECT key FROM $schema.unique_locks')).toEqual([])
    expect((await post(`/api/v1/jobs/${id}/cancel`)).status).toBe(404)
    const batch = await t.sluice.createBatch()
    const inBatch = (await t.sluice.enqueue(greet, { to: 'y' }, { batch: batch.id } as never)).id!
    const res = await post(`/api/v1/jobs/${inBatch}/cancel`)
    expect(res.status).toBe(409)
    expect(await jobs()).toHaveLength(1)
  })

  test('dead letters: list by filter, retry and discard by filter; an empty filter is refused', async () => {
    for (let n = 0; n < 3; n++) await t.sluice.enqueue(doomed, { n })
    await t.sluice.drain({ queues: ['doomed'] })
    const listed = await get('/api/v1/dead-letters?queue=doomed&limit=2')
    expect((listed.body.deadLetters as unknown[]).length).toBe(2)
    expect(listed.body.nextCursor).not.toBeNull()
    const [a, b, c] = await deadIds()
    const empty = await post('/api/v1/dead-letters/discard', {})
    expect(empty.status).toBe(400)
    expect(await deadIds()).toEqual([a, b, c])
    expect((await post('/api/v1/dead-letters/retry', { ids: [a] })).body).toEqual({
      ids: [a],
      requeued: [a],
      kept: [],
    })
    expect((await get(`/api/v1/jobs/${a}`)).status).toBe(200)
    expect((await post('/api/v1/dead-letters/discard', { queue: 'doomed', limit: 1 })).body.ids).toHaveLength(
      1,
    )
    expect(await deadIds()).toHaveLength(1)
  })

  test('queues and partitions: pause, resume, cap; unknown ones are 404', async () => {
    expect((await post('/api/v1/queues/default/pause')).status).toBe(200)
    expect((await get('/api/v1/queues')).body.states).toContainEqual(
      expect.objectContaining({ name: 'default', paused: true, archive: true }),
    )
    expect((await post('/api/v1/queues/default/resume')).status).toBe(200)
    expect((await post('/api/v1/queues/nosuch/pause')).status).toBe(404)
    expect(await t.sql(`SELECT name FROM $schema.queues WHERE name = 'nosuch'`)).toEqual([])

    await t.sluice.enqueue(send, { account: 'acme' })
    expect((await post('/api/v1/policies/send/partitions/acme/pause')).status).toBe(200)
    expect((await send_('PUT', '/api/v1/policies/send/partitions/acme/cap', { cap: 1 })).status).toBe(200)
    const partitions = await get('/api/v1/policies/send/partitions')
    expect(partitions.body.partitions).toEqual([
      expect.objectContaining({
        partition: 'acme',
        paused: true,
        capOverride: 1,
        reason: 'partition paused',
      }),
    ])
    expect((await send_('PUT', '/api/v1/policies/send/partitions/acme/cap', { cap: null })).status).toBe(200)
    expect((await post('/api/v1/policies/send/partitions/acme/resume')).status).toBe(200)
    expect((await post('/api/v1/policies/send/partitions/nope/pause')).status).toBe(404)
  })

  test('every listed partition key is addressable: pause, resume and cap with the key in the body', async () => {
    const keys = ['', '.', '..', '/', '%', 'a/b', '%2F', 'ünï cödé ✓']
    for (const account of keys) await t.sluice.enqueue(send, { account })
    const listed = async () =>
      Object.fromEntries(
        (
          (await get('/api/v1/policies/send/partitions')).body.partitions as {
            partition: string
            paused: boolean
            capOverride: number | null
          }[]
        ).map((p) => [p.partition, p]),
      )
    expect(Object.keys(await listed())).toEqual(expect.arrayContaining(keys))
    for (const [i, partition] of keys.entries()) {
      expect((await post('/api/v1/policies/send/partitions/pause', { partition })).status).toBe(200)
      expect((await send_('PUT', '/api/v1/policies/send/partitions/cap', { partition, cap: i })).status).toBe(
        200,
      )
      // Only this key changed: the others keep their state.
      const after = await listed()
      for (const [j, key] of keys.entries())
        expect(after[key]).toMatchObject(
          j <= i ? { paused: true, capOverride: j } : { paused: false, capOverride: null },
        )
    }
    for (const partition of keys) {
      expect((await post('/api/v1/policies/send/partitions/resume', { partition })).status).toBe(200)
      expect(
        (await send_('PUT', '/api/v1/policies/send/partitions/cap', { partition, cap: null })).status,
      ).toBe(200)
      expect((await listed())[partition]).toMatchObject({ paused: false, capOverride: null })
    }
    // A key never enqueued into is 404; a body without the key, or with another field, 400.
    expect((await post('/api/v1/policies/send/partitions/pause', { partition: 'nope' })).status).toBe(404)
    expect((await post('/api/v1/policies/send/partitions/pause', {})).status).toBe(400)
    expect((await post('/api/v1/policies/send/partitions/pause', { partition: 'acme', x: 1 })).status).toBe(
      400,
    )
    expect((await send_('PUT', '/api/v1/policies/send/partitions/cap', { partition: '' })).status).toBe(400)
    // The path form still serves keys that are a path segment, percent-encoded ones included.
    expect((await post(`/api/v1/policies/send/partitions/${encodeURIComponent('%')}/pause`)).status).toBe(200)
    expect((await listed())['%']).toMatchObject({ paused: true })
    expect(
      (await post(`/api/v1/policies/send/partitions/${encodeURIComponent('ünï cödé ✓')}/pause`)).status,
    ).toBe(200)
    expect((await listed())['ünï cödé ✓']).toMatchObject({ paused: true })
  })

  test('bad input answers 400 in the standard error body and changes nothing', async () => {
    const id = (await t.sluice.enqueue(greet, { to: 'x' }, { delay: 3_600_000 })).id!
    await t.sluice.enqueue(send, { account: 'acme' })
    const state = () =>
      Promise.all([
        jobs(),
        t.sql('SELECT name, paused FROM $schema.queues ORDER BY name'),
        t.sql('SELECT partition_key, paused, cap_override FROM $schema.partitions ORDER BY 1'),
      ])
    const before = await state()
    const cases: [string, string, unknown?][] = [
      ['GET', '/api/v1/jobs/abc'],
      ['GET', '/api/v1/jobs/0'],
      ['GET', '/api/v1/jobs/-1'],
      ['GET', '/api/v1/jobs/99999999999999999999'],
      ['GET', '/api/v1/jobs/9223372036854775808'],
      ['GET', '/api/v1/jobs?limit=1000000'],
      ['GET', '/api/v1/jobs?limit=0'],
      ['GET', '/api/v1/jobs?limit=ten'],
      ['GET', '/api/v1/jobs?state=dead'],
      ['GET', '/api/v1/jobs?cursor=x'],
      ['GET', '/api/v1/jobs?queue=bad%20name'],
      ['GET', '/api/v1/jobs?unknown=1'],
      ['GET', '/api/v1/dead-letters?limit=99999'],
      ['GET', '/api/v1/policies/send/partitions?limit=5000'],
      ['GET', '/api/v1/stats?sinceMs=-5'],
      ['GET', '/api/v1/recurring?limit=abc'],
      ['GET', '/api/v1/batches/1.5'],
      ['POST', `/api/v1/jobs/${id}x/cancel`],
      ['POST', '/api/v1/jobs/1e3/run-now'],
      ['POST', '/api/v1/queues/bad%20name/pause'],
      ['POST', '/api/v1/dead-letters/retry', { ids: ['abc'] }],
      ['POST', '/api/v1/dead-letters/retry', { ids: 'all' }],
      ['POST', '/api/v1/dead-letters/discard', { queue: 'doomed', limit: 1_000_000 }],
      ['POST', '/api/v1/dead-letters/discard', { queue: 'doomed', extra: true }],
      ['POST', '/api/v1/dead-letters/discard', '{not json'],
      ['POST', '/api/v1/dead-letters/discard', []],
      ['PUT', '/api/v1/policies/send/partitions/acme/cap', { cap: '3' }],
      ['PUT', '/api/v1/policies/send/partitions/acme/cap', { cap: -1 }],
      ['PUT', '/api/v1/policies/send/partitions/acme/cap', { cap: 1.5 }],
      ['PUT', '/api/v1/policies/send/partitions/acme/cap', {}],
      ['PUT', `/api/v1/policies/${'p'.repeat(600)}/partitions/acme/cap`, { cap: 1 }],
    ]
    for (const [method, path, body] of cases) {
      const res = await send_(method, path, body)
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400)
      expect(res.body.error, path).toMatchObject({
        code: expect.stringMatching(/^INVALID_/),
        message: expect.any(String),
      })
    }
    expect(await state()).toEqual(before)
    // The first issue is named in the message.
    const res = await get('/api/v1/jobs?limit=1000000')
    expect(res.body.error.message).toMatch(/limit/)
  })

  test('unknown admin paths and methods answer the JSON 404', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/nope'],
      ['DELETE', '/api/v1/queues'],
      ['GET', '/api/v1/jobs/1/retry'],
    ] as const) {
      const res = await app.request(path, { method, headers: bearer() })
      expect(res.status, `${method} ${path}`).toBe(404)
      expect((await errorOf(res)).code).toBe('NOT_FOUND')
    }
  })

  test("the admin API follows the app's credentials; auth: false serves it open", async () => {
    const res = await app.request('/api/v1/queues', {
      headers: { Authorization: 'Bearer wrong-token-0123456789' },
    })
    expect(res.status).toBe(401)
    expect((await errorOf(res)).code).toBe('UNAUTHORIZED')
    const open = appFor(t, { auth: false })
    expect((await open.request('/api/v1/queues')).status).toBe(200)
    expect((await open.request('/openapi.json')).status).toBe(200)
  })
})
