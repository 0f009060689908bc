import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, type Db, defineJob, PermanentJobError, type Sluice } from '../../src/index.js'
import { adapterCases } from '../helpers/adapters.js'
import { StatementCounter, uniqueSchema } from '../helpers/db.js'

describe.each(adapterCases)('core flow on $name', (adapter) => {
  const seen: string[] = []
  const greet = defineJob({
    name: 'greet',
    input: z.object({ who: z.string() }),
    run: (input) => {
      seen.push(input.who)
    },
  })
  const explode = defineJob({
    name: 'explode',
    queue: 'fragile',
    input: z.object({ permanent: z.boolean() }),
    retry: { maxAttempts: 2, baseDelayMs: 0, jitter: 0 },
    run: (input) => {
      throw input.permanent ? new PermanentJobError('no point retrying') : new Error('boom')
    },
  })
  const statements = new StatementCounter()
  let sluice: Sluice
  let db: Db
  let close: () => Promise<void>

  beforeAll(async () => {
    const opened = await adapter.open()
    db = opened.db
    close = opened.close
    sluice = createSluice({
      database: db,
      schema: uniqueSchema(`core_${adapter.name.replace('-', '_')}`),
      jobs: [greet, explode],
      onQuery: statements.hook,
    })
    const migrated = await sluice.migrate()
    expect(migrated.applied.length).toBeGreaterThan(0)
    expect((await sluice.migrate()).applied).toEqual([])
  })
  afterAll(async () => {
    await db.query({ text: `DROP SCHEMA IF EXISTS "${sluice.config.schema}" CASCADE`, values: [] })
    await close()
  })

  test('enqueue, enqueueMany and drain, one statement each way', async () => {
    statements.reset()
    const one = await sluice.enqueue(greet, { who: 'ada' })
    expect(statements.count).toBe(1)
    const many = await sluice.enqueueMany(greet, [{ who: 'bob' }, { who: 'cy' }, { who: 'di' }])
    expect(statements.count).toBe(2)
    expect(many.map((r) => BigInt(r.id!))).toEqual(
      [...many.map((r) => BigInt(r.id!))].sort((a, b) => (a < b ? -1 : 1)),
    )
    expect(BigInt(many[0]!.id!)).toBeGreaterThan(BigInt(one.id!))

    statements.reset()
    const summary = await sluice.drain({ queues: ['default'] })
    expect(summary).toMatchObject({ claimed: 4, completed: 4, failed: 0, handedBack: 0, remainingReady: 0 })
    expect(seen.sort()).toEqual(['ada', 'bob', 'cy', 'di'])
    // One batch: claim + settle-and-finish.
    expect(statements.count).toBe(2)
  })

  test('failures retry, then dead-letter; permanent errors dead-letter at once', async () => {
    await sluice.enqueue(explode, { permanent: false })
    await sluice.enqueue(explode, { permanent: true })
    const first = await sluice.drain({ queues: ['fragile'] })
    expect(first).toMatchObject({ claimed: 2, retried: 1, deadLettered: 1 })
    const second = await sluice.drain({ queues: ['fragile'] })
    expect(second).toMatchObject({ claimed: 1, retried: 0, deadLettered: 1 })
    const dead = await sluice.deadLetters.list({ queue: 'fragile' })
    expect(dead).toHaveLength(2)
    const retried = dead.find((d) => d.attempts === 2)!
    expect(retried.lastError).toMatchObject({ name: 'Error', message: 'boom', attempt: 2 })
    expect(retried.errors).toHaveLength(2)
    expect(await sluice.deadLetters.retry(retried.id)).toEqual({ requeued: [retried.id], kept: [] })
    expect(await sluice.deadLetters.discard({ queue: 'fragile' })).toHaveLength(1)
    expect(await sluice.deadLetters.list({ queue: 'fragile' })).toEqual([])
  })

  test('enqueue inside a transaction commits and rolls back with it', async () => {
    if (!db.interactiveTransactions) {
      await expect(db.transaction(async () => 1)).rejects.toMatchObject({ code: 'UNSUPPORTED' })
      return
    }
    await db.transaction(async (tx) => {
      await sluice.enqueue(
        greet,
        { who: 'kept' },
        { tx: { query: (text: string, values?: unknown[]) => tx.query({ text, values: values ?? [] }) } },
      )
    })
    await expect(
      db.transaction(async (tx) => {
        await sluice.enqueue(
          greet,
          { who: 'dropped' },
          { tx: { query: (text: string, values?: unknown[]) => tx.query({ text, values: values ?? [] }) } },
        )
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    seen.length = 0
    await sluice.drain({ queues: ['default'] })
    expect(seen).toEqual(['kept'])
  })
})
