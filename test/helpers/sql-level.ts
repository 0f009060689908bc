/**
 * A migrated schema for SQL-level tests: the row factory to seed it, and `run` to send the SQL
 * builders' statements to it. The schema is dropped afterwards unless the test failed.
 */
import type pg from 'pg'
import { expect, onTestFailed } from 'vitest'
import { fromPg, type Statement } from '../../src/index.js'
import { migrate } from '../../src/migrate/run.js'
import { quoteSchema } from '../../src/names.js'
import { type ClaimedRow, type ClaimParams, type ClaimRow, claim } from '../../src/sql/index.js'
import { pgPool, uniqueSchema } from './db.js'
import { type RowFactory, rowFactory } from './rows.js'

/** A claim's parameters: the defaults SQL-level tests claim with (queue `default`, 10 jobs, inv-a), then `p`. */
export const claimParams = (p: Partial<ClaimParams> = {}): ClaimParams => ({
  queues: ['default'],
  limit: 10,
  leaseMs: 30_000,
  invocationId: 'inv-a',
  invocationPriority: 0,
  jobsDone: 0,
  ...p,
})

export interface SqlSchema {
  schema: string
  /** The schema quoted for SQL, as the builders take it. */
  t: string
  pool: pg.Pool
  rows: RowFactory
  /** Sends a builder's statement; returns its rows. */
  run<R>(statement: Statement, on?: pg.Pool | pg.PoolClient | pg.Client): Promise<R[]>
  /** A claim with claimParams(p): every row it returns. */
  claimRows(p?: Partial<ClaimParams>): Promise<ClaimRow[]>
  /** The jobs a claim with claimParams(p) took (rows with an id), in the order it returned them. */
  claimed(p?: Partial<ClaimParams>): Promise<ClaimedRow[]>
  /** Runs `text` with `$t` replaced by the quoted schema. */
  sql<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>
  /** The backend of a connection the test holds, for `waitsOnLock`. */
  pidOf(client: pg.PoolClient | pg.Client): Promise<number>
  /** Waits until the backend `pid` waits on a lock (a statement it was sent is blocked). */
  waitsOnLock(pid: number): Promise<void>
  /**
   * Drops the schema, unless the test failed: from afterEach, pass its context
   * (`afterEach((context) => s.cleanup(context))`) so that a failing test keeps its rows.
   */
  cleanup(context?: { task: { result?: { state?: string } } }): Promise<void>
}

/** A migrated schema of its own; see `cleanup` for keeping it when a test fails. */
export async function sqlSchema(): Promise<SqlSchema> {
  const schema = uniqueSchema('s')
  const pool = pgPool(6)
  await migrate(fromPg(pool), schema)
  const t = quoteSchema(schema)
  let failed = false
  try {
    onTestFailed(() => {
      failed = true
    })
  } catch {
    // Called from a hook: cleanup is told by its caller whether the test failed.
  }
  const claimRows = async (p?: Partial<ClaimParams>): Promise<ClaimRow[]> => {
    const statement = claim(t, claimParams(p))
    return (await pool.query(statement.text, statement.values as unknown[])).rows as ClaimRow[]
  }
  return {
    schema,
    t,
    pool,
    rows: rowFactory(pool, t),
    async run<R>(statement: Statement, on: pg.Pool | pg.PoolClient | pg.Client = pool) {
      const result = await on.query(statement.text, statement.values as unknown[])
      return result.rows as R[]
    },
    claimRows,
    async claimed(p) {
      return (await claimRows(p)).filter((r): r is ClaimedRow => r.id !== null)
    },
    async sql<R>(text: string, values: unknown[] = []) {
      const { rows } = await pool.query(text.replaceAll('$t', t), values)
      return rows as R[]
    },
    async pidOf(client) {
      return ((await client.query('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number }).pid
    },
    async waitsOnLock(pid) {
      await expect
        .poll(
          async () =>
            (
              await pool.query<{ n: number }>(
                `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`,
                [pid],
              )
            ).rows[0]!.n,
          { timeout: 30_000, interval: 20 },
        )
        .toBe(1)
    },
    async cleanup(context) {
      if (context?.task.result?.state === 'fail') failed = true
      if (!failed) await pool.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`)
      await pool.end()
    },
  }
}
