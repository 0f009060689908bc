import pg from 'pg'
import { inject, onTestFailed } from 'vitest'
import { createSluice, fromPg, type QueryEvent, type Sluice, type SluiceOptions } from '../../src/index.js'

export const databaseUrl: string = inject('databaseUrl')

let counter = 0
/** A schema name no other test uses. */
export function uniqueSchema(prefix = 't'): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`
}

export function pgPool(max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max })
  pool.on('error', () => {})
  return pool
}

/** Counts statements sent through the query hook. */
export class StatementCounter {
  events: QueryEvent[] = []
  readonly hook = (event: QueryEvent): void => {
    this.events.push(event)
  }
  get count(): number {
    return this.events.length
  }
  reset(): void {
    this.events = []
  }
}

export interface TestSluice {
  sluice: Sluice
  schema: string
  statements: StatementCounter
  /** A pool for the test's own queries against the same database. */
  admin: pg.Pool
  /** Runs `text` against the test's schema (the schema is quoted as `$schema`). */
  sql<R extends pg.QueryResultRow = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>
  cleanup(): Promise<void>
}

/**
 * A migrated Sluice on a fresh schema. The schema is dropped afterwards unless the test
 * failed, so a failing test leaves its rows behind to look at.
 */
export async function makeSluice(
  options: Omit<SluiceOptions, 'schema'> & { schema?: string },
): Promise<TestSluice> {
  const schema = options.schema ?? uniqueSchema()
  const statements = new StatementCounter()
  const sluice = createSluice({ database: databaseUrl, ...options, schema, onQuery: statements.hook })
  await sluice.migrate()
  statements.reset()
  const admin = pgPool(2)
  let failed = false
  try {
    onTestFailed(() => {
      failed = true
    })
  } catch {
    // Called from a hook rather than a test: cleanup always drops.
  }
  return {
    sluice,
    schema,
    statements,
    admin,
    async sql(text, values = []) {
      const { rows } = await admin.query(text.replaceAll('$schema', `"${schema}"`), values)
      return rows
    },
    async cleanup() {
      await sluice.close()
      if (!failed) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await admin.end()
    },
  }
}

/**
 * Sluice instances on `n` separate connections to the same schema (one pool of one
 * connection each), for tests that race real connections. `close()` ends the pools.
 */
export function onConnections(
  schema: string,
  options: Omit<SluiceOptions, 'schema' | 'database'>,
  n: number,
): { sluices: Sluice[]; close(): Promise<void> } {
  const pools: pg.Pool[] = []
  const sluices = Array.from({ length: n }, () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 })
    pool.on('error', () => {})
    pools.push(pool)
    return createSluice({ ...options, database: fromPg(pool), schema })
  })
  return { sluices, close: () => Promise.all(pools.map((p) => p.end())).then(() => {}) }
}

/**
 * `connections(options, n)`: Sluice instances on separate connections to the schema `schemaOf()`
 * names (the current test's), all closed by `closeAll()` (call it after each test).
 */
export function perTestConnections(schemaOf: () => string): {
  connections(options: Omit<SluiceOptions, 'schema' | 'database'>, n: number): Sluice[]
  closeAll(): Promise<void>
} {
  const closers: (() => Promise<void>)[] = []
  return {
    connections(options, n) {
      const { sluices, close } = onConnections(schemaOf(), options, n)
      closers.push(close)
      return sluices
    },
    closeAll: () => Promise.all(closers.splice(0).map((close) => close())).then(() => {}),
  }
}

/**
 * SQL that ends, a millisecond ago, the leases of the leased jobs matching `where` (as if their
 * drain had died): each job's `lease_until` and its lease row's (`claim_leases`), the jobs moved to
 * a row of their own so that the rest of their claim keeps its lease. `schema` is the schema as the
 * caller's query writes it (`$schema`, `$t`, or a quoted name).
 */
export function endLeasesSql(schema: string, where = 'true'): string {
  return `WITH j AS (
  UPDATE ${schema}.jobs SET lease_until = now() - interval '1 ms'
  WHERE lease_token IS NOT NULL AND (${where})
  RETURNING id, lease_token, queue, policy, partition_key, lease_until
), trimmed AS (
  UPDATE ${schema}.claim_leases l SET ids = ARRAY(SELECT x FROM unnest(l.ids) AS x WHERE x NOT IN (SELECT id FROM j))
  WHERE l.token IN (SELECT lease_token FROM j)
)
INSERT INTO ${schema}.claim_leases (token, queue, policy, partition_key, lease_until, ids)
SELECT lease_token, queue, policy, partition_key, lease_until, array_agg(id) FROM j GROUP BY 1, 2, 3, 4, 5`
}
