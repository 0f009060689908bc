import type { Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createEdgeClient, createEnqueueApp, defineContract } from '../../src/edge.js'
import { defineJob, defineSubscriber, fromPg } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, errorOf, postJson, testEnv } from '../helpers/http.js'

// Request bodies whose JSON is valid but whose values PostgreSQL cannot store, or that nest
// deep enough to overflow a recursive parser: a 400 naming the field, nothing written, on the
// full app and on the edge app.

type Tree = string | Tree[]
const tree: z.ZodType<Tree> = z.lazy(() => z.union([z.string(), z.array(tree)]))
const profileContract = defineContract({ name: 'profile', input: z.object({ name: z.string() }) })
const profile = defineJob({ ...profileContract, run: () => {} })
const anything = defineJob({ name: 'anything', input: z.unknown(), run: () => {} })
const nested = defineJob({ name: 'nested', input: tree, run: () => {} })
const audit = defineSubscriber({
  name: 'audit',
  topic: 'orders.#',
  input: z.object({ id: z.string() }),
  run: () => {},
})

let t: TestSluice
const apps: [string, () => Hono][] = []
beforeAll(async () => {
  t = await makeSluice({ jobs: [profile, anything, nested], subscribers: [audit] })
  const full = appFor(t)
  const edge = createEnqueueApp(
    createEdgeClient({ database: fromPg(t.admin), jobs: [profileContract], schema: t.schema }),
    { env: testEnv, onError: () => {} },
  )
  apps.push(['full app', () => full], ['edge app', () => edge])
})
afterAll(() => t.cleanup())
beforeEach(async () => {
  await t.sql('TRUNCATE $schema.jobs, $schema.event_deliveries')
})

async function written(): Promise<number> {
  const [row] = await t.sql<{ n: string }>(
    'SELECT (SELECT count(*) FROM $schema.jobs) + (SELECT count(*) FROM $schema.event_deliveries) AS n',
  )
  return Number(row!.n)
}

const deep = (levels: number, leaf = '"x"'): string => '['.repeat(levels) + leaf + ']'.repeat(levels)

describe.each([['full app'], ['edge app']])('%s', (which) => {
  const app = (): Hono => apps.find(([name]) => name === which)![1]()

  test.each([
    ['a NUL escape in a value', '{"input": {"name": "a\\u0000b"}}', ['input', 'name'], 'input.name'],
    ['a lone surrogate in a value', '{"input": {"name": "\\ud800"}}', ['input', 'name'], 'input.name'],
    ['a NUL in an unknown key', '{"input": {"name": "a", "k\\u0000": 1}}', ['input', 'k\u0000'], 'input["k'],
    ['a reversed surrogate pair', '{"input": {"name": "\\udc00\\ud83d"}}', ['input', 'name'], 'input.name'],
  ])('enqueue, %s: 400 naming the field, nothing written', async (_, body, path, named) => {
    const res = await postJson(app(), '/jobs/profile', body)
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.message).toContain(named)
    expect(error.issues?.[0]?.path).toEqual(path)
    expect(await written()).toBe(0)
  })

  test.each([
    ['a NUL in the payload', '{"payload": {"id": "o\\u0000"}}', ['payload', 'id']],
    ['a lone surrogate in the payload', '{"payload": [1, {"x": "\\udbff"}]}', ['payload', 1, 'x']],
    [
      'a NUL in a header value',
      '{"payload": {"id": "o"}, "headers": {"tenant": "\\u0000"}}',
      ['headers', 'tenant'],
    ],
    [
      'a lone surrogate in a header value',
      '{"payload": {"id": "o"}, "headers": {"t": "\\ud800"}}',
      ['headers', 't'],
    ],
    ['5,000 levels of payload', `{"payload": ${deep(5_000)}}`, ['payload', ...Array(100).fill(0)]],
  ])('publish, %s: 400 naming the field, nothing written', async (_, body, path) => {
    const res = await postJson(app(), '/events/orders.created', body)
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.issues?.[0]?.path).toEqual(path)
    expect(await written()).toBe(0)
  })
})

describe('full app only', () => {
  test.each([
    ['anything', deep(5_000)],
    ['nested', deep(5_000)],
    ['anything', deep(101, '1')],
  ])('enqueue %s nested too deep: 400, not 500', async (job, input) => {
    const res = await postJson(apps[0]![1](), `/jobs/${job}`, `{"input": ${input}}`)
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('nests deeper than 100'),
    })
    expect(await written()).toBe(0)
  })

  test('unknown keys in the input are not stored', async () => {
    const res = await postJson(apps[0]![1](), '/jobs/profile', {
      input: { name: 'ada', isAdmin: true, junk: 'x'.repeat(100_000) },
    })
    expect(res.status).toBe(202)
    const rows = await t.sql<{ payload: unknown }>('SELECT payload FROM $schema.jobs')
    expect(rows).toEqual([{ payload: { name: 'ada' } }])
  })

  test('the edge app stores what validation accepted too', async () => {
    const res = await postJson(
      apps[1]![1](),
      '/jobs/profile',
      `{"input": {"name": "bo", "__proto__": {"isAdmin": true}}}`,
    )
    expect(res.status).toBe(202)
    const rows = await t.sql<{ payload: unknown }>('SELECT payload FROM $schema.jobs')
    expect(rows).toEqual([{ payload: { name: 'bo' } }])
  })
})
