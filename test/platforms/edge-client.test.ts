import { neon, neonConfig } from '@neondatabase/serverless'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createEdgeClient, type EdgeClient } from '../../src/edge.js'
import {
  ConfigError,
  defineContract,
  defineJob,
  fromNeonHttp,
  instrument,
  UnknownJobError,
  ValidationError,
} from '../../src/index.js'
import { databaseUrl, makeSluice, StatementCounter, type TestSluice } from '../helpers/db.js'
import {
  configureNeonHttpForLocal,
  type NeonHttpServer,
  startNeonHttpServer,
} from '../support/neon-http-server.js'

const signupContract = defineContract({
  name: 'signup',
  queue: 'accounts',
  input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']) }),
  priority: 100,
  retry: { maxAttempts: 3, baseDelayMs: 500 },
})
const signup = defineJob({ ...signupContract, timeout: 5_000, run: () => {} })

/** The driver insists on a user, host and database; the local endpoint uses its own connection string. */
const NEON_URL = 'postgres://sluice:sluice@localhost:5432/sluice'

let env: TestSluice
let server: NeonHttpServer
let edge: EdgeClient
const statements = new StatementCounter()

beforeAll(async () => {
  env = await makeSluice({ jobs: [signup], maxPayloadBytes: 1024 })
  server = await startNeonHttpServer({ connectionString: databaseUrl })
  configureNeonHttpForLocal(neonConfig, server.port)
  edge = createEdgeClient({
    database: instrument(fromNeonHttp(neon(NEON_URL)), statements.hook),
    jobs: [signupContract],
    schema: env.schema,
    maxPayloadBytes: 1024,
  })
})
afterAll(async () => {
  await server.close()
  await env.cleanup()
})

const jobRows = () =>
  env.sql<{ queue: string; name: string; payload: unknown; priority: number; max_attempts: number }>(
    'SELECT queue, name, payload, priority, max_attempts FROM $schema.jobs ORDER BY id',
  )

describe('contracts', () => {
  test('a job defined from a contract keeps its queue, priority and retry policy', () => {
    expect(signup).toMatchObject({
      kind: 'job',
      name: 'signup',
      queue: 'accounts',
      priority: 100,
      timeout: 5_000,
      retry: { maxAttempts: 3, baseDelayMs: 500, factor: 2 },
    })
    expect(signupContract).not.toHaveProperty('run')
  })

  test('defineContract validates like defineJob and refuses a handler', () => {
    expect(() => defineContract({ name: 'bad name', input: z.object({}) })).toThrow(ConfigError)
    expect(() => defineContract({ name: 'x', input: {} as never })).toThrow(/zod schema/)
    expect(() => defineContract({ name: 'x', input: z.object({}), run: () => {} } as never)).toThrow(
      ConfigError,
    )
  })

  test('createSluice enqueues through a contract of a registered job', async () => {
    await env.sql('DELETE FROM $schema.jobs')
    const { id } = await env.sluice.enqueue(signupContract, { email: 'a@b.co', plan: 'pro' })
    expect(id).toMatch(/^\d+$/)
    const ids = await env.sluice.enqueueMany(signupContract, [{ email: 'c@d.co', plan: 'free' }])
    expect(ids).toHaveLength(1)
    expect(await jobRows()).toEqual([
      {
        queue: 'accounts',
        name: 'signup',
        payload: { email: 'a@b.co', plan: 'pro' },
        priority: 100,
        max_attempts: 3,
      },
      {
        queue: 'accounts',
        name: 'signup',
        payload: { email: 'c@d.co', plan: 'free' },
        priority: 100,
        max_attempts: 3,
      },
    ])
  })

  test('a contract that disagrees with the registered job, or names no job, is refused', async () => {
    await env.sql('DELETE FROM $schema.jobs')
    const elsewhere = defineContract({ ...signupContract, queue: 'other' })
    await expect(env.sluice.enqueue(elsewhere, { email: 'a@b.co', plan: 'pro' })).rejects.toThrow(
      /disagrees with the registered job on queue/,
    )
    const stranger = defineContract({ name: 'stranger', input: z.object({}) })
    await expect(env.sluice.enqueue(stranger, {})).rejects.toBeInstanceOf(UnknownJobError)
    expect(await jobRows()).toEqual([])
  })
})

describe('edge client over the Neon HTTP driver', () => {
  test('enqueues the same row as the main path, in one statement', async () => {
    await env.sql('DELETE FROM $schema.jobs')
    statements.reset()
    const { id } = await edge.enqueue(signupContract, { email: 'e@f.co', plan: 'free' }, { priority: 7 })
    expect(statements.count).toBe(1)
    const byName = await edge.enqueue('signup', { email: 'g@h.co', plan: 'pro' }, { delay: 60_000 })
    expect(BigInt(byName.id!)).toBeGreaterThan(BigInt(id!))
    const rows = await env.sql<{ priority: number; due_later: boolean }>(
      "SELECT priority, run_at > now() + interval '30 seconds' AS due_later FROM $schema.jobs ORDER BY id",
    )
    expect(rows).toEqual([
      { priority: 7, due_later: false },
      { priority: 100, due_later: true },
    ])
    expect((await jobRows())[0]).toEqual({
      queue: 'accounts',
      name: 'signup',
      payload: { email: 'e@f.co', plan: 'free' },
      priority: 7,
      max_attempts: 3,
    })
  })

  test('enqueueMany is one statement and returns ids in input order', async () => {
    await env.sql('DELETE FROM $schema.jobs')
    statements.reset()
    const inputs = Array.from({ length: 50 }, (_, n) => ({ email: `u${n}@x.co`, plan: 'free' as const }))
    const ids = await edge.enqueueMany(signupContract, inputs)
    expect(statements.count).toBe(1)
    const rows = await env.sql<{ id: string; email: string }>(
      "SELECT id::text, payload->>'email' AS email FROM $schema.jobs j ORDER BY j.id",
    )
    expect(ids.map((r) => r.id)).toEqual(rows.map((r) => r.id))
    expect(rows.map((r) => r.email)).toEqual(inputs.map((i) => i.email))
  })

  test('bad input, unknown jobs, oversized payloads and tx change nothing', async () => {
    await env.sql('DELETE FROM $schema.jobs')
    statements.reset()
    const invalid = await edge
      .enqueue(signupContract, { email: 'nope', plan: 'gold' } as never)
      .catch((e) => e)
    expect(invalid).toBeInstanceOf(ValidationError)
    expect((invalid as ValidationError).issues?.map((i) => i.path)).toEqual([['email'], ['plan']])
    const many = await edge
      .enqueueMany(signupContract, [{ email: 'a@b.co', plan: 'free' }, { email: 'x' } as never])
      .catch((e) => e)
    expect((many as ValidationError).issues?.[0]?.path).toEqual([1, 'email'])
    await expect(edge.enqueue('nope', {} as never)).rejects.toMatchObject({ code: 'UNKNOWN_JOB' })
    await expect(
      edge.enqueue(signupContract, { email: `${'a'.repeat(2000)}@b.co`, plan: 'free' }),
    ).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' })
    await expect(
      edge.enqueue(signupContract, { email: 'a@b.co', plan: 'free' }, { tx: {} } as never),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', issues: [{ path: ['tx'] }] })
    // A job definition is not a contract: the edge client knows contracts only.
    await expect(edge.enqueue(signup, { email: 'a@b.co', plan: 'free' })).rejects.toBeInstanceOf(
      UnknownJobError,
    )
    expect(statements.count).toBe(0)
    expect(await jobRows()).toEqual([])
  })

  test('a URL opens the Neon HTTP driver, and the schema comes from SLUICE_SCHEMA', async () => {
    await env.sql('DELETE FROM $schema.jobs')
    const client = createEdgeClient({
      database: NEON_URL,
      jobs: [signupContract],
      env: { SLUICE_SCHEMA: env.schema },
    })
    expect(client.schema).toBe(env.schema)
    await client.enqueue('signup', { email: 'a@b.co', plan: 'pro' })
    expect(await jobRows()).toHaveLength(1)
  })

  test('options are validated up front', () => {
    const base = { database: NEON_URL, jobs: [signupContract] }
    expect(() => createEdgeClient({ ...base, database: 'mysql://x' })).toThrow(ConfigError)
    expect(() => createEdgeClient({ ...base, jobs: [signup as never] })).toThrow(/defineContract/)
    expect(() => createEdgeClient({ ...base, jobs: [signupContract, signupContract] })).toThrow(
      /Two contracts/,
    )
    expect(() => createEdgeClient({ ...base, schema: 'Bad-Schema' })).toThrow(ConfigError)
    expect(() => createEdgeClient({ ...base, env: { SLUICE_SCHEMA: 'pg_x' } })).toThrow(/SLUICE_SCHEMA/)
  })
})
