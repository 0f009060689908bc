import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  ConfigError,
  defineJob,
  defineSubscriber,
  type SluiceError,
  ValidationError,
} from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

// Values PostgreSQL cannot store, or that would crash a recursive walk, get a 400 naming the
// field and change nothing, through every library entry point.

type Tree = string | Tree[]
const tree: z.ZodType<Tree> = z.lazy(() => z.union([z.string(), z.array(tree)]))

const seen: unknown[] = []
const anything = defineJob({ name: 'anything', input: z.unknown(), run: (input) => void seen.push(input) })
const nested = defineJob({ name: 'nested', input: tree, run: () => {} })
const profile = defineJob({
  name: 'profile',
  input: z.object({ name: z.string(), tags: z.array(z.string()).optional() }),
  run: (input) => void seen.push(input),
})
const contact = defineJob({
  name: 'contact',
  input: z.object({ email: z.string().trim().toLowerCase(), since: z.coerce.date() }),
  run: (input) => void seen.push(input),
})
const lengthOf = defineJob({ name: 'length-of', input: z.string().transform((s) => s.length), run: () => {} })
const when = defineJob({ name: 'when', input: z.object({ at: z.date() }), run: () => {} })
const padded = defineJob({ name: 'padded', input: z.string().transform((s) => `${s}\u0000`), run: () => {} })
const orders = defineSubscriber({
  name: 'order-audit',
  topic: 'orders.#',
  input: z.object({ orderId: z.string() }),
  run: (payload, ctx) => void seen.push({ payload, headers: ctx.event.headers }),
})

let env: TestSluice
beforeAll(async () => {
  env = await makeSluice({
    jobs: [anything, nested, profile, contact, lengthOf, when, padded],
    subscribers: [orders],
  })
})
afterAll(() => env.cleanup())
beforeEach(async () => {
  await env.sql('TRUNCATE $schema.jobs, $schema.archive_groups, $schema.event_deliveries, $schema.batches')
  env.statements.reset()
  seen.length = 0
})

async function expectNothingWritten(): Promise<void> {
  expect(env.statements.count).toBe(0)
  const [row] = await env.sql<{ n: number }>(
    `SELECT (SELECT count(*) FROM $schema.jobs) + (SELECT count(*) FROM $schema.event_deliveries)
          + (SELECT count(*) FROM $schema.batches) AS n`,
  )
  expect(Number(row!.n)).toBe(0)
}

async function refused(work: Promise<unknown>): Promise<ValidationError> {
  const error = await work.then(
    () => {
      throw new Error('accepted')
    },
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ValidationError)
  expect(error).toMatchObject({ code: 'INVALID_INPUT' })
  return error as ValidationError
}

const deep = (levels: number, leaf: unknown = 'x'): unknown => {
  let value = leaf
  for (let i = 0; i < levels; i++) value = [value]
  return value
}

describe('strings PostgreSQL cannot store: NUL and lone surrogates', () => {
  test.each([
    ['a NUL', 'a\u0000b'],
    ['a lone high surrogate', 'x\ud800'],
    ['a lone low surrogate', '\udc00y'],
    ['a reversed pair', '\udc00\ud800'],
  ])('%s in a job input, named by its path', async (_, bad) => {
    const error = await refused(env.sluice.enqueue(anything, { a: { b: [0, 1, 2, bad] } }))
    expect(error.message).toContain('input.a.b[3]')
    expect(error.issues?.[0]?.path).toEqual(['a', 'b', 3])
    await expectNothingWritten()
  })

  test('in a key', async () => {
    const error = await refused(env.sluice.enqueue(anything, { ok: 1, 'k\u0000': 1 }))
    expect(error.message).toContain('input["k\\u0000"]')
    expect(error.message).toMatch(/key contains a NUL/)
    await expectNothingWritten()
  })

  test('in one input of enqueueMany: the whole call is refused, naming the index', async () => {
    const error = await refused(
      env.sluice.enqueueMany(profile, [{ name: 'ok' }, { name: 'ok', tags: ['\ud83d'] }]),
    )
    expect(error.message).toMatch(/^Input 1: .*input\.tags\[0\]/)
    expect(error.issues?.[0]?.path).toEqual([1, 'tags', 0])
    await expectNothingWritten()
  })

  test('in an event payload or header value', async () => {
    const payload = await refused(env.sluice.publish('orders.created', { orderId: 'o\u0000' }))
    expect(payload.message).toContain('payload.orderId')
    expect(payload.issues?.[0]?.path).toEqual(['payload', 'orderId'])
    const unknownTopic = await refused(env.sluice.publish('nobody.listens', ['\ud800']))
    expect(unknownTopic.issues?.[0]?.path).toEqual(['payload', 0])
    const header = await refused(
      env.sluice.publish('orders.created', { orderId: 'o_1' }, { headers: { tenant: 'acme\u0000' } }),
    )
    expect(header.issues?.[0]?.path).toEqual(['headers', 'tenant'])
    await expectNothingWritten()
  })

  test('in batch properties', async () => {
    const error = await refused(env.sluice.createBatch({ properties: { note: '\udfff' } }))
    expect(error.message).toContain('properties.note')
    await expectNothingWritten()
  })

  test('well-formed text is kept exactly: pairs, other control characters, escapes', async () => {
    const text = 'emoji 😀, tab\t, bell\u0007, backslash-u \\u0000, 𝄞'
    await env.sluice.enqueue(anything, { [text]: text })
    const [row] = await env.sql<{ payload: unknown }>('SELECT payload FROM $schema.jobs')
    expect(row!.payload).toEqual({ [text]: text })
  })
})

describe('depth, numbers and values JSON has no form for', () => {
  test('5,000 levels deep: a 400, not a stack overflow, for any schema', async () => {
    for (const job of [anything, nested]) {
      const error = await refused(env.sluice.enqueue(job, deep(5_000) as never))
      expect(error.message).toMatch(/nests deeper than 100 levels/)
    }
    await refused(env.sluice.publish('orders.created', deep(5_000)))
    await refused(env.sluice.enqueueMany(anything, [1, deep(5_000)]))
    await expectNothingWritten()
  })

  test('100 levels are accepted, 101 are not', async () => {
    await env.sluice.enqueue(nested, deep(100) as never)
    const error = await refused(env.sluice.enqueue(nested, deep(101) as never))
    expect(error.issues?.[0]?.path).toHaveLength(100)
    expect(await env.sql('SELECT 1 FROM $schema.jobs')).toHaveLength(1)
  })

  test.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a bigint', 10n],
    ['a function', () => 1],
    ['a symbol', Symbol('s')],
  ])('%s', async (_, value) => {
    const error = await refused(env.sluice.enqueue(anything, { list: [value] }))
    expect(error.issues?.[0]?.path).toEqual(['list', 0])
    await refused(env.sluice.publish('nobody.listens', { value }))
    await expectNothingWritten()
  })

  test('a cycle is refused, not a crash', async () => {
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic.self = cyclic
    await refused(env.sluice.enqueue(anything, cyclic))
    await refused(env.sluice.publish('nobody.listens', cyclic))
    await expectNothingWritten()
  })
})

describe('what is stored is what validation accepted', () => {
  test('unknown keys are dropped: junk, isAdmin, __proto__', async () => {
    const sent = JSON.parse(
      `{"name": "ada", "isAdmin": true, "__proto__": {"isAdmin": true}, "junk": "${'x'.repeat(200_000)}"}`,
    )
    const { id } = await env.sluice.enqueue(profile, sent)
    const [row] = await env.sql<{ payload: unknown; bytes: number }>(
      'SELECT payload, octet_length(payload::text) AS bytes FROM $schema.jobs WHERE id = $1',
      [id],
    )
    expect(row).toEqual({ payload: { name: 'ada' }, bytes: 15 })
    await env.sluice.drain()
    expect(seen).toEqual([{ name: 'ada' }])
    expect((seen[0] as { isAdmin?: unknown }).isAdmin).toBeUndefined()
  })

  test('enqueueMany stores each parsed output', async () => {
    await env.sluice.enqueueMany(profile, [{ name: 'a', extra: 1 } as never, { name: 'b', tags: [] }])
    const rows = await env.sql<{ payload: unknown }>('SELECT payload FROM $schema.jobs ORDER BY id')
    expect(rows.map((r) => r.payload)).toEqual([{ name: 'a' }, { name: 'b', tags: [] }])
  })

  test('transforms that accept their own output are stored applied and parsed again by the handler', async () => {
    await env.sluice.enqueue(contact, { email: '  Ada@Example.COM ', since: '2026-01-02T03:04:05Z' } as never)
    const [row] = await env.sql<{ payload: unknown }>('SELECT payload FROM $schema.jobs')
    expect(row!.payload).toEqual({ email: 'ada@example.com', since: '2026-01-02T03:04:05.000Z' })
    await env.sluice.drain()
    expect(seen).toEqual([{ email: 'ada@example.com', since: new Date('2026-01-02T03:04:05Z') }])
  })

  test.each([
    ['a transform that changes the type', lengthOf, 'abc'],
    ['z.date(), whose output is stored as a string', when, { at: new Date() }],
    ['a transform that adds a NUL', padded, 'abc'],
  ])('%s fails the enqueue (INVALID_CONFIG), not every run', async (_, job, input) => {
    const error = (await env.sluice.enqueue(job, input as never).catch((e: unknown) => e)) as SluiceError
    expect(error).toBeInstanceOf(ConfigError)
    expect(error.code).toBe('INVALID_CONFIG')
    expect(error.message).toContain(`"${job.name}"`)
    await expectNothingWritten()
  })

  test('an event is stored as published; each subscriber gets what its schema accepts', async () => {
    const published = { orderId: 'o_1', isAdmin: true, note: 'for other subscribers' }
    await env.sluice.publish('orders.created', published, { headers: { tenant: 'acme' } })
    const [row] = await env.sql<{ payload: { payload: unknown } }>('SELECT payload FROM $schema.jobs')
    expect(row!.payload.payload).toEqual(published)
    await env.sluice.drain()
    expect(seen).toEqual([{ payload: { orderId: 'o_1' }, headers: { tenant: 'acme' } }])
  })
})
