import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, defineRecurring, PermanentJobError } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, bearer } from '../helpers/http.js'
import { embeddedSchemas, newAjv, openApi31Validator } from '../helpers/openapi.js'

type Json = Record<string, unknown>
interface Op {
  path: string
  method: string
  spec: Json
}

const greet = defineJob({ name: 'greet', input: z.object({ to: z.string() }), run: () => {} })
const flaky = defineJob({
  name: 'flaky',
  queue: 'flaky',
  retry: { maxAttempts: 5, baseDelayMs: 60_000 },
  input: z.object({}),
  run: () => {
    throw new Error('not yet')
  },
})
const doomed = defineJob({
  name: 'doomed',
  queue: 'doomed',
  input: z.object({}),
  run: () => {
    throw new PermanentJobError('never')
  },
})
const send = defineJob({
  name: 'send',
  queue: 'sends',
  input: z.object({ account: z.string() }),
  admission: { partition: (i) => i.account, concurrency: { max: 2 } },
  run: () => {},
})

function operations(doc: Json): Op[] {
  const ops: Op[] = []
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>))
    for (const [method, spec] of Object.entries(item)) ops.push({ path, method, spec })
  return ops
}

describe('the OpenAPI document and the admin API it describes', () => {
  let t: TestSluice
  let app: Hono
  let doc: Json

  const scheduled = async (): Promise<string> =>
    (await t.sluice.enqueue(greet, { to: 'ada' }, { delay: 3_600_000 })).id!
  const failed = async (): Promise<string> => {
    const { id } = await t.sluice.enqueue(flaky, {})
    await t.sluice.drain({ queues: ['flaky'] })
    const [row] = await t.sql<{ attempts: number }>('SELECT attempts FROM $schema.jobs WHERE id = $1', [id])
    expect(row?.attempts).toBe(1)
    return id!
  }

  /** What any write would change. */
  const state = () =>
    Promise.all([
      t.sql('SELECT id, run_at, attempts FROM $schema.jobs ORDER BY id'),
      t.sql('SELECT id FROM $schema.dead_letters ORDER BY id'),
      t.sql('SELECT name, paused FROM $schema.queues ORDER BY name'),
      t.sql('SELECT partition_key, paused, cap_override FROM $schema.partitions ORDER BY 1'),
    ])

  /** Valid path parameters for an operation, seeding what it acts on. */
  async function paramsFor(op: Op): Promise<Record<string, string>> {
    const { path } = op
    if (path === '/jobs/{name}') return { name: 'greet' }
    if (path === '/events/{topic}') return { topic: 'order.created' }
    if (path.startsWith('/api/v1/queues/')) return { name: 'default' }
    if (path === '/api/v1/jobs/{id}/retry') return { id: await failed() }
    if (path.startsWith('/api/v1/jobs/{id}')) return { id: await scheduled() }
    if (path === '/api/v1/batches/{id}') return { id: (await t.sluice.createBatch()).id }
    if (path.startsWith('/api/v1/policies/')) return { policy: 'send', partition: 'a' }
    if (path.startsWith('/api/v1/recurring/{task}')) return { task: 'nightly' }
    return {}
  }

  async function call(
    op: Op,
    headers: Record<string, string> = bearer(),
    target: Hono = app,
    seeded?: Record<string, string>,
  ) {
    const params = seeded ?? (await paramsFor(op))
    const url = op.path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => encodeURIComponent(params[name]!))
    const body = (
      op.spec.requestBody as { content: { 'application/json': { example?: unknown } } } | undefined
    )?.content['application/json'].example
    return target.request(url, {
      method: op.method.toUpperCase(),
      headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  }

  beforeAll(async () => {
    t = await makeSluice({
      jobs: [greet, flaky, doomed, send],
      recurring: [defineRecurring({ name: 'nightly', cron: '0 3 * * *', job: greet, input: { to: 'ops' } })],
    })
    app = appFor(t)
    await t.sluice.enqueue(send, { account: 'a' })
    await t.sluice.enqueue(doomed, {})
    await t.sluice.drain({ queues: ['doomed'] })
    const res = await app.request('/openapi.json', { headers: bearer() })
    expect(res.status).toBe(200)
    doc = (await res.json()) as Json
  })
  afterAll(() => t.cleanup())

  test('is a valid OpenAPI 3.1 document whose schemas are valid JSON Schema 2020-12', () => {
    expect(openApi31Validator()(doc)).toEqual([])
    const ajv = newAjv()
    const schemas = embeddedSchemas(doc)
    expect(schemas.length).toBeGreaterThan(60)
    for (const { where, schema } of schemas) {
      expect(ajv.validateSchema(schema), where).toBe(true)
      ajv.compile(schema)
    }
    // The validator can fail.
    expect(openApi31Validator()({ ...doc, paths: { '/x': { get: { responses: 5 } } } })).not.toEqual([])
  })

  test('covers every admin route and the enqueue, publish, drain and maintain routes', () => {
    const ids = operations(doc).map((op) => op.spec.operationId)
    expect(new Set(ids).size).toBe(ids.length)
    const listed = operations(doc).map((op) => `${op.method.toUpperCase()} ${op.path}`)
    expect(listed.sort()).toEqual(
      [
        'POST /jobs/{name}',
        'POST /events/{topic}',
        'POST /drain',
        'GET /maintain',
        'POST /maintain',
        'GET /api/v1/queues',
        'POST /api/v1/queues/{name}/pause',
        'POST /api/v1/queues/{name}/resume',
        'GET /api/v1/jobs',
        'GET /api/v1/jobs/{id}',
        'POST /api/v1/jobs/{id}/retry',
        'POST /api/v1/jobs/{id}/run-now',
        'POST /api/v1/jobs/{id}/cancel',
        'GET /api/v1/dead-letters',
        'POST /api/v1/dead-letters/retry',
        'POST /api/v1/dead-letters/discard',
        'GET /api/v1/invocations',
        'GET /api/v1/overview',
        'GET /api/v1/locks',
        'GET /api/v1/database',
        'GET /api/v1/events',
        'GET /api/v1/recurring/tasks',
        'POST /api/v1/recurring/{task}/trigger',
        'POST /api/v1/queues/{name}/purge',
        'POST /api/v1/jobs/retry',
        'POST /api/v1/jobs/cancel',
        'GET /api/v1/recurring',
        'GET /api/v1/batches/{id}',
        'GET /api/v1/policies',
        'GET /api/v1/policies/{policy}/partitions',
        'POST /api/v1/policies/{policy}/partitions/pause',
        'POST /api/v1/policies/{policy}/partitions/resume',
        'PUT /api/v1/policies/{policy}/partitions/cap',
        'POST /api/v1/policies/{policy}/partitions/{partition}/pause',
        'POST /api/v1/policies/{policy}/partitions/{partition}/resume',
        'PUT /api/v1/policies/{policy}/partitions/{partition}/cap',
        'GET /api/v1/stats',
        'GET /api/v1/health',
      ].sort(),
    )
  })

  test('the reads show what was seeded', async () => {
    const jobs = (await (await app.request('/api/v1/jobs?queue=sends', { headers: bearer() })).json()) as {
      jobs: { name: string; state: string; payload: unknown; partition: string }[]
    }
    expect(jobs.jobs).toEqual([
      expect.objectContaining({ name: 'send', state: 'waiting', payload: { account: 'a' } }),
    ])
    const dead = (await (
      await app.request('/api/v1/dead-letters?queue=doomed', { headers: bearer() })
    ).json()) as {
      deadLetters: { name: string; lastError: { message: string } }[]
    }
    expect(dead.deadLetters).toEqual([
      expect.objectContaining({ name: 'doomed', lastError: expect.objectContaining({ message: 'never' }) }),
    ])
    const partitions = (await (
      await app.request('/api/v1/policies/send/partitions', { headers: bearer() })
    ).json()) as { partitions: { partition: string }[] }
    expect(partitions.partitions.map((p) => p.partition)).toEqual(['a'])
  })

  test('every operation, called with valid input, answers a documented status with a body of its schema', async () => {
    const ajv = newAjv()
    for (const op of operations(doc)) {
      const where = `${op.method.toUpperCase()} ${op.path}`
      const res = await call(op)
      const text = await res.text()
      const responses = op.spec.responses as Record<
        string,
        { content?: { 'application/json': { schema: Json } } }
      >
      expect(Object.keys(responses), `${where} answered ${res.status}: ${text}`).toContain(String(res.status))
      expect(res.status, `${where}: ${text}`).toBeLessThan(300)
      const schema = responses[String(res.status)]?.content?.['application/json'].schema
      if (schema) {
        const validate = ajv.compile(schema)
        expect(
          validate(JSON.parse(text)),
          `${where}: ${JSON.stringify(validate.errors)} in ${text.slice(0, 500)}`,
        ).toBe(true)
      }
    }
  })

  test('without credentials every operation answers 401 and changes nothing', async () => {
    const ops = operations(doc)
    const seeded = []
    for (const op of ops) seeded.push(await paramsFor(op))
    const before = await state()
    for (const [i, op] of ops.entries()) {
      const res = await call(op, {}, app, seeded[i])
      expect(res.status, `${op.method} ${op.path}`).toBe(401)
    }
    const wrong = await app.request('/openapi.json', { headers: bearer('not-the-token-at-all-0123') })
    expect(wrong.status).toBe(401)
    expect(await state()).toEqual(before)
  })

  test('read-only: every mutation answers 403 READ_ONLY and changes nothing; reads still answer', async () => {
    const readOnly = appFor(t, { admin: { readOnly: true } })
    const admin = operations(doc).filter((op) => op.path.startsWith('/api/v1/'))
    const mutations = admin.filter((op) => op.spec['x-mutation'] === true)
    expect(mutations).toHaveLength(17)
    const seeded = []
    for (const op of mutations) seeded.push(await paramsFor(op))
    const before = await state()
    for (const [i, op] of mutations.entries()) {
      const res = await call(op, bearer(), readOnly, seeded[i])
      expect(res.status, `${op.method} ${op.path}`).toBe(403)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('READ_ONLY')
    }
    expect(await state()).toEqual(before)
    for (const op of admin.filter((o) => o.spec['x-mutation'] !== true)) {
      const res = await call(op, bearer(), readOnly)
      expect(res.status, `${op.method} ${op.path}`).toBe(200)
    }
  })
})
