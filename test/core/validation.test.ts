import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { ConfigError, createSluice, defineJob, SluiceError, ValidationError } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

const signup = defineJob({
  name: 'signup',
  input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']) }),
  run: () => {},
})

let env: TestSluice
beforeAll(async () => {
  env = await makeSluice({ jobs: [signup], maxPayloadBytes: 1024 })
})
afterAll(() => env.cleanup())

async function expectNothingWritten(): Promise<void> {
  expect(env.statements.count).toBe(0)
  expect(await env.sql(`SELECT 1 FROM $schema.jobs`)).toEqual([])
}

describe('bad input gets a typed error and writes nothing', () => {
  test('invalid job input carries the zod issues', async () => {
    env.statements.reset()
    const error = await env.sluice
      .enqueue(signup, { email: 'not-an-email', plan: 'gold' } as never)
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ValidationError)
    expect(error).toMatchObject({ code: 'INVALID_INPUT' })
    expect((error as ValidationError).issues?.map((i) => i.path)).toEqual([['email'], ['plan']])
    await expectNothingWritten()
  })

  test('one bad input in enqueueMany rejects the whole call, naming its index', async () => {
    env.statements.reset()
    const error = await env.sluice
      .enqueueMany(signup, [
        { email: 'a@b.co', plan: 'free' },
        { email: 'x', plan: 'free' },
      ])
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('Input 1') })
    expect((error as ValidationError).issues?.[0]?.path).toEqual([1, 'email'])
    await expectNothingWritten()
  })

  test('unknown jobs, by name or by a definition this instance does not know', async () => {
    env.statements.reset()
    await expect(env.sluice.enqueue('nope', {} as never)).rejects.toMatchObject({ code: 'UNKNOWN_JOB' })
    const stranger = defineJob({ name: 'signup', input: z.object({}), run: () => {} })
    await expect(env.sluice.enqueue(stranger, {})).rejects.toMatchObject({ code: 'UNKNOWN_JOB' })
    // A name no job can have says so.
    await expect(env.sluice.enqueue('bad name!', {} as never)).rejects.toMatchObject({
      code: 'INVALID_NAME',
      message: expect.stringContaining('Invalid job name "bad name!"'),
    })
    await expectNothingWritten()
  })

  test('oversized payloads', async () => {
    env.statements.reset()
    const error = await env.sluice
      .enqueue(signup, { email: `${'a'.repeat(2000)}@b.co`, plan: 'free' })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' })
    await expectNothingWritten()
  })

  test('bad options: negative delay, priority out of range, garbage runAt, unknown keys', async () => {
    env.statements.reset()
    const input = { email: 'a@b.co', plan: 'free' } as const
    for (const options of [
      { delay: -1 },
      { priority: 40_000 },
      { priority: 1.5 },
      { runAt: 'tomorrow' },
      { colour: 'red' },
    ]) {
      await expect(env.sluice.enqueue(signup, input, options as never)).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      })
    }
    await expectNothingWritten()
  })

  test('drain options are validated too', async () => {
    env.statements.reset()
    await expect(env.sluice.drain({ queues: ["x'; DROP TABLE jobs; --"] })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    })
    await expect(env.sluice.drain({ budgetMs: -5 })).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    expect(env.statements.count).toBe(0)
  })
})

describe('names and configuration', () => {
  test.each([
    ["x'; DROP TABLE jobs; --"],
    ['has space'],
    [''],
    ['-leading-dash'],
    ['a'.repeat(129)],
    ['ünïcode'],
  ])('job and queue name %j is rejected', (name) => {
    expect(() => defineJob({ name, input: z.object({}), run: () => {} })).toThrow(ConfigError)
    expect(() => defineJob({ name: 'ok', queue: name, input: z.object({}), run: () => {} })).toThrow(
      ConfigError,
    )
  })

  test('good names pass', () => {
    for (const name of ['emails', 'emails.welcome', 'v2:report-nightly', 'A_1']) {
      expect(defineJob({ name, queue: name, input: z.object({}), run: () => {} }).name).toBe(name)
    }
  })

  test.each([['"; DROP SCHEMA public; --'], ['Upper'], ['pg_catalog'], ['1abc'], ['a'.repeat(64)]])(
    'schema %j is rejected before anything connects',
    (schema) => {
      expect(() => createSluice({ database: 'postgres://nowhere/x', schema })).toThrow(ConfigError)
    },
  )

  test('a definition must have a zod schema and a handler; errors carry a stable code', () => {
    const bad = () => defineJob({ name: 'x', input: {} as never, run: 'nope' as never })
    expect(bad).toThrow(SluiceError)
    try {
      bad()
    } catch (error) {
      expect((error as SluiceError).code).toBe('INVALID_CONFIG')
      expect((error as SluiceError).issues?.map((i) => i.path[0]).sort()).toEqual(['input', 'run'])
    }
  })

  test('no database anywhere is a clear configuration error at the first operation, not at creation', async () => {
    // A framework's build imports the module that creates the Sluice, with no environment.
    const sluice = createSluice({ env: {}, jobs: [signup] })
    await expect(sluice.migrate()).rejects.toThrow(/No database: pass `database`.* or set DATABASE_URL/)
    await expect(sluice.drain()).rejects.toThrow(ConfigError)
  })

  test('a URL pg cannot read is a configuration error naming where it came from, before any connection', async () => {
    const fromEnv = createSluice({
      env: { DATABASE_URL: 'postgres://u:p#ss@127.0.0.1:5432/db' },
      jobs: [signup],
    })
    await expect(fromEnv.migrate()).rejects.toThrow(
      /^DATABASE_URL is not a URL the PostgreSQL driver can read/,
    )
    const given = createSluice({ database: 'postgres://127.0.0.1:99999/db', jobs: [signup] })
    const refused = await given.drain().catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ConfigError)
    expect((refused as ConfigError).message).toMatch(/^database is not a URL .*\(# as %23/)
  })

  test('duplicate job names are refused', () => {
    expect(() => createSluice({ database: 'postgres://x/y', jobs: [signup, signup] })).toThrow(/Two jobs/)
  })
})
