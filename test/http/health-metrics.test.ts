import { type AddressInfo, createServer } from 'node:net'
import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  createApp,
  createSluice,
  defineJob,
  fromPg,
  type QueueMetrics,
  toPrometheus,
} from '../../src/index.js'
import { makeSluice, StatementCounter, type TestSluice, uniqueSchema } from '../helpers/db.js'
import { appFor, bearer, errorOf, NEXT_SECRET, postJson, testEnv } from '../helpers/http.js'

describe('GET /health', () => {
  test("200 after one statement, the schema's migration version, without credentials", async () => {
    const t = await makeSluice({ jobs: [] })
    try {
      const res = await appFor(t).request('/health')
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ ok: true, database: 'ok' })
      expect(t.statements.events.map((e) => e.text)).toEqual([
        `SELECT version FROM "${t.schema}".migrations ORDER BY version`,
      ])
    } finally {
      await t.cleanup()
    }
  })

  test('503 naming `sluice migrate` on a schema without Sluice, or behind this Sluice', async () => {
    const t = await makeSluice({ jobs: [] })
    const bare = createSluice({ database: fromPg(t.admin), schema: uniqueSchema() })
    try {
      const res = await createApp(bare, { env: testEnv }).request('/health')
      expect(res.status).toBe(503)
      expect(await res.json()).toEqual({
        ok: false,
        database: 'ok',
        migrations: 'required',
        message: expect.stringMatching(/^Sluice's tables are not in schema "[^"]+"\. Run `sluice migrate`/),
      })
      await t.sql(
        `DELETE FROM $schema.migrations WHERE version = (SELECT max(version) FROM $schema.migrations)`,
      )
      const behind = await appFor(t).request('/health')
      expect(behind.status).toBe(503)
      expect(((await behind.json()) as { message: string }).message).toMatch(
        /^Schema "[^"]+" is at version \d+; this Sluice needs version \d+\. Run `sluice migrate`/,
      )
      const admin = await appFor(t).request('/api/v1/health', { headers: bearer() })
      expect(admin.status).toBe(503)
      expect(await admin.json()).toMatchObject({ ok: false, database: 'ok', migrations: 'required' })
    } finally {
      await bare.close()
      await t.cleanup()
    }
  })

  test('503 when the database cannot be reached, with no address in the answer', async () => {
    const statements = new StatementCounter()
    const sluice = createSluice({
      database: 'postgres://postgres@127.0.0.1:1/x',
      schema: uniqueSchema(),
      onQuery: statements.hook,
    })
    try {
      const app = createApp(sluice, { env: testEnv, onError: () => {} })
      const res = await app.request('/health')
      expect(res.status).toBe(503)
      const text = await res.text()
      expect(JSON.parse(text)).toEqual({ ok: false, database: 'unreachable' })
      expect(text).not.toContain('127.0.0.1')
      expect(statements.events[0]?.error).toBeDefined()

      // The same outage on another route is a 503 DATABASE_UNAVAILABLE with a generic message.
      const maintain = await postJson(app, '/maintain', {})
      expect(maintain.status).toBe(503)
      const error = await errorOf(maintain)
      expect(error.code).toBe('DATABASE_UNAVAILABLE')
      expect(error.message).not.toContain('127.0.0.1')
    } finally {
      await sluice.close()
    }
  })

  test('a server that accepts and drops the connection is an outage too: 503 on every route', async () => {
    // A proxy or a restarting server: the TCP connection opens, then ends before any reply.
    const dropper = createServer((socket) => socket.destroy())
    await new Promise<void>((ok) => dropper.listen(0, '127.0.0.1', ok))
    const { port } = dropper.address() as AddressInfo
    const ping = defineJob({ name: 'ping', input: z.object({}), run: () => {} })
    const sluice = createSluice({
      database: `postgres://postgres@127.0.0.1:${port}/x`,
      schema: uniqueSchema(),
      jobs: [ping],
    })
    try {
      const app = createApp(sluice, { env: testEnv, onError: () => {} })
      expect((await app.request('/health')).status).toBe(503)
      for (const res of [
        await postJson(app, '/maintain', {}),
        await postJson(app, '/drain', {}),
        await postJson(app, '/jobs/ping', { input: {} }),
      ]) {
        expect(res.status).toBe(503)
        expect((await errorOf(res)).code).toBe('DATABASE_UNAVAILABLE')
      }
    } finally {
      await sluice.close()
      await new Promise((ok) => dropper.close(ok))
    }
  })

  test('can require the bearer token', async () => {
    const t = await makeSluice({ jobs: [] })
    try {
      const app = appFor(t, { auth: { publicHealth: false } })
      expect((await app.request('/health')).status).toBe(401)
      expect((await app.request('/health', { headers: bearer() })).status).toBe(200)
    } finally {
      await t.cleanup()
    }
  })
})

/** Parses Prometheus text into `family{queue} -> value`, checking HELP and TYPE come first. */
function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>()
  const described = new Set<string>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const meta = /^# (HELP|TYPE) (\w+) (.+)$/.exec(line)
    if (meta) {
      if (meta[1] === 'TYPE') {
        expect(meta[3]).toBe('gauge')
        described.add(meta[2]!)
      }
      continue
    }
    const sample = /^(\w+)\{queue="((?:[^"\\\n]|\\["\\n])*)"\} (\S+)$/.exec(line)
    expect(sample, line).not.toBeNull()
    expect(described.has(sample![1]!)).toBe(true)
    samples.set(`${sample![1]}{${sample![2]}}`, Number(sample![3]))
  }
  return samples
}

describe('GET /metrics', () => {
  let t: TestSluice
  let app: Hono
  let release: () => void = () => {}
  let started: () => void = () => {}
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const holding = new Promise<void>((resolve) => {
    started = resolve
  })

  const greet = defineJob({ name: 'greet', input: z.object({}), run: () => {} })
  const hold = defineJob({
    name: 'hold',
    queue: 'slow',
    input: z.object({}),
    run: async () => {
      started()
      await gate
    },
  })
  const explode = defineJob({
    name: 'explode',
    queue: 'fragile',
    input: z.object({}),
    retry: 1,
    run: () => {
      throw new Error('boom')
    },
  })
  const idle = defineJob({ name: 'idle', queue: 'idle', input: z.object({}), run: () => {} })

  beforeAll(async () => {
    t = await makeSluice({ jobs: [greet, hold, explode, idle] })
    app = appFor(t)
  })
  afterAll(() => t.cleanup())

  test('per-queue ready, delayed, in flight, dead lettered and oldest age', async () => {
    // default: two ready (one due for a minute), one delayed.
    await t.sluice.enqueue(greet, {}, { runAt: new Date(Date.now() - 60_000) })
    await t.sluice.enqueue(greet, {})
    await t.sluice.enqueue(greet, {}, { delay: 3_600_000 })
    // fragile: two dead letters after one drain.
    await t.sluice.enqueueMany(explode, [{}, {}])
    expect((await t.sluice.drain({ queues: ['fragile'] })).deadLettered).toBe(2)
    // slow: one held by a running drain.
    await t.sluice.enqueue(hold, {})
    const draining = t.sluice.drain({ queues: ['slow'] })
    await holding

    t.statements.reset()
    const res = await app.request('/metrics', { headers: bearer() })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(t.statements.count).toBe(1)
    const samples = parseExposition(await res.text())
    release()
    await draining

    const expected: Record<string, [number, number, number, number]> = {
      default: [2, 1, 0, 0],
      fragile: [0, 0, 0, 2],
      idle: [0, 0, 0, 0],
      slow: [0, 0, 1, 0],
    }
    for (const [queue, [ready, delayed, inFlight, dead]] of Object.entries(expected)) {
      expect(samples.get(`sluice_jobs_ready{${queue}}`), queue).toBe(ready)
      expect(samples.get(`sluice_jobs_delayed{${queue}}`), queue).toBe(delayed)
      expect(samples.get(`sluice_jobs_in_flight{${queue}}`), queue).toBe(inFlight)
      expect(samples.get(`sluice_jobs_dead_lettered{${queue}}`), queue).toBe(dead)
    }
    const age = samples.get('sluice_oldest_ready_age_seconds{default}')!
    expect(age).toBeGreaterThanOrEqual(59)
    expect(age).toBeLessThan(600)
    expect(samples.get('sluice_oldest_ready_age_seconds{idle}')).toBe(0)
    expect(samples.size).toBe(7 * 4)
  })

  test('needs the bearer token by default (either rotating token); can be public', async () => {
    t.statements.reset()
    expect((await app.request('/metrics')).status).toBe(401)
    expect(t.statements.count).toBe(0)
    expect((await app.request('/metrics', { headers: bearer(NEXT_SECRET) })).status).toBe(200)
    const open = appFor(t, { auth: { publicMetrics: true } })
    expect((await open.request('/metrics')).status).toBe(200)
  })

  test('label values are escaped', () => {
    const m: QueueMetrics = {
      queue: 'a"b\\c\nd',
      ready: 1,
      delayed: 0,
      retrying: 0,
      inFlight: 0,
      deadLettered: 0,
      oldestReadyAgeSeconds: 1.5,
      blocked: 0,
      paused: false,
      breakerUntil: null,
    }
    const text = toPrometheus([m])
    expect(text).toContain('sluice_jobs_ready{queue="a\\"b\\\\c\\nd"} 1\n')
    expect(text).toContain('sluice_oldest_ready_age_seconds{queue="a\\"b\\\\c\\nd"} 1.5\n')
    expect(parseExposition(text).size).toBe(7)
  })
})
