import { PGlite } from '@electric-sql/pglite'
import { neon, neonConfig } from '@neondatabase/serverless'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  createSluice,
  type Db,
  defineJob,
  defineSubscriber,
  fromNeonHttp,
  fromNeonPool,
  fromPg,
  fromPglite,
  type Sluice,
} from '../../src/index.js'
import { databaseUrl, pgPool, StatementCounter, uniqueSchema } from '../helpers/db.js'
import { configureNeonHttpForLocal, startNeonHttpServer } from '../support/neon-http-server.js'
import { localNeonPool, startWsProxy } from '../support/ws-proxy.js'

interface Client {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

interface DriverCase {
  name: string
  open(): Promise<{
    db: Db
    /** Runs `fn` on a client inside a transaction, then commits or rolls back; undefined without transactions. */
    inTx?: (fn: (tx: Client) => Promise<void>, commit: boolean) => Promise<void>
    close(): Promise<void>
  }>
}

const poolTx =
  (pool: { connect(): Promise<Client & { release(): void }> }) =>
  async (fn: (tx: Client) => Promise<void>, commit: boolean): Promise<void> => {
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      await fn(client)
      await client.query(commit ? 'COMMIT' : 'ROLLBACK')
    } finally {
      client.release()
    }
  }

const cases: DriverCase[] = [
  {
    name: 'pg client',
    async open() {
      const pool = pgPool(4)
      return { db: fromPg(pool), inTx: poolTx(pool), close: () => pool.end() }
    },
  },
  {
    name: 'Neon Pool client',
    async open() {
      const url = new URL(databaseUrl)
      const proxy = await startWsProxy({ host: url.hostname, port: Number(url.port || 5432) })
      const pool = localNeonPool({ connectionString: databaseUrl, max: 4 }, proxy.port)
      return {
        db: fromNeonPool(pool),
        inTx: poolTx(pool as unknown as { connect(): Promise<Client & { release(): void }> }),
        async close() {
          await pool.end()
          await proxy.close()
        },
      }
    },
  },
  {
    name: 'PGlite transaction',
    async open() {
      const lite = new PGlite()
      await lite.waitReady
      return {
        db: fromPglite(lite),
        inTx: (fn, commit) =>
          lite.transaction(async (tx) => {
            await fn(tx)
            if (!commit) await tx.rollback()
          }),
        close: () => lite.close(),
      }
    },
  },
  {
    name: 'neon-http (no transactions)',
    async open() {
      const server = await startNeonHttpServer({ connectionString: databaseUrl })
      configureNeonHttpForLocal(neonConfig, server.port)
      return {
        db: fromNeonHttp(neon('postgres://sluice:sluice@localhost:5432/sluice')),
        close: () => server.close(),
      }
    },
  },
]

describe.each(cases)('events on $name', (driver) => {
  const statements = new StatementCounter()
  const job = defineJob({ name: 'notify', input: z.object({ id: z.string() }), run: () => {} })
  let sluice: Sluice
  let db: Db
  let opened: Awaited<ReturnType<DriverCase['open']>>
  const t = (): string => `"${sluice.config.schema}"`
  const count = async (table: string): Promise<number> => {
    const { rows } = await db.query<{ n: number }>({
      text: `SELECT count(*)::int AS n FROM ${t()}.${table}`,
      values: [],
    })
    return Number(rows[0]!.n)
  }
  const ledger = defineSubscriber({
    name: 'ledger',
    topic: 'orders.*',
    input: z.object({ id: z.string() }),
    retry: { maxAttempts: 3, baseDelayMs: 0, jitter: 0 },
    run: async (payload, ctx) => {
      await ctx.transaction(async (tx) => {
        await tx.query({
          text: `INSERT INTO ${t()}.effects (id) VALUES ($1)`,
          values: [`${payload.id}:${ctx.event.id}`],
        })
      })
    },
  })
  const audit = defineSubscriber({ name: 'audit', topic: '#', run: () => {} })

  beforeAll(async () => {
    opened = await driver.open()
    db = opened.db
    sluice = createSluice({
      database: db,
      schema: uniqueSchema('events_drv'),
      jobs: [job],
      subscribers: [ledger, audit],
      onQuery: statements.hook,
    })
    await sluice.migrate()
    await db.query({ text: `CREATE TABLE ${t()}.effects (id text PRIMARY KEY)`, values: [] })
  })
  afterAll(async () => {
    await db.query({ text: `DROP SCHEMA IF EXISTS ${t()} CASCADE`, values: [] })
    await opened.close()
  })

  test('publish is one statement', async () => {
    statements.reset()
    expect(await sluice.publish('orders.created', { id: 'a' }, { eventId: 'a' })).toEqual({
      eventId: 'a',
      jobs: 2,
    })
    expect(statements.count).toBe(1)
  })

  test('inside the caller transaction: a rollback leaves no event, job or outbox entry; a commit leaves exactly them', async () => {
    const inTx = opened.inTx
    if (!inTx) {
      await expect(db.transaction(async () => 1)).rejects.toMatchObject({ code: 'UNSUPPORTED' })
      return
    }
    const before = {
      deliveries: await count('event_deliveries'),
      jobs: await count('jobs'),
      outbox: await count('outbox'),
    }
    const work = async (tx: Client): Promise<void> => {
      await sluice.publish('orders.paid', { id: 'b' }, { eventId: 'b-paid', tx })
      await sluice.enqueue(job, { id: 'b' }, { tx })
      await tx.query(`SELECT ${t()}.outbox_publish('orders.shipped', '{"id": "b"}', 'b-shipped')`)
    }
    await inTx(work, false)
    expect({
      deliveries: await count('event_deliveries'),
      jobs: await count('jobs'),
      outbox: await count('outbox'),
    }).toEqual(before)
    await inTx(work, true)
    expect({
      deliveries: await count('event_deliveries'),
      jobs: await count('jobs'),
      outbox: await count('outbox'),
    }).toEqual({
      deliveries: before.deliveries + 2,
      jobs: before.jobs + 3,
      outbox: before.outbox + 1,
    })
  })

  test('ctx.transaction commits the effect with the mark, where the driver has transactions', async () => {
    const summary = await sluice.drain()
    if (db.interactiveTransactions) {
      // a (2 jobs), b-paid (2), notify, b-shipped relayed by the first claim (2).
      expect(summary).toMatchObject({ completed: 7, failed: 0 })
      const { rows } = await db.query<{ id: string }>({
        text: `SELECT id FROM ${t()}.effects ORDER BY id`,
        values: [],
      })
      expect(rows.map((r) => r.id)).toEqual(['a:a', 'b:b-paid', 'b:b-shipped'])
    } else {
      // Over HTTP the ledger's ctx.transaction is refused: its run fails and is retried.
      expect(summary).toMatchObject({ completed: 1, retried: 1 })
      const { rows } = await db.query<{ last_error: { code: string } }>({
        text: `SELECT last_error FROM ${t()}.jobs WHERE name = 'ledger'`,
        values: [],
      })
      expect(rows[0]!.last_error).toMatchObject({ code: 'UNSUPPORTED' })
    }
  })
})
