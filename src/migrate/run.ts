import { PG, sqlStateOf } from '../db/errors.js'
import type { Db, Statement } from '../db/types.js'
import { quoteSchema } from '../names.js'
import { migrations as bundled } from './migrations.generated.js'
import type { Migration } from './types.js'

export interface MigrateResult {
  /** Versions this call applied. */
  applied: number[]
  /** The schema's version afterwards. */
  version: number
}

const lockKey = (schema: string): Statement => ({
  // Held to the end of the batch's transaction: never a session lock.
  text: "SELECT pg_advisory_xact_lock(hashtext('sluice.migrate'), hashtext($1))",
  values: [schema],
})

export function render(statement: string, schema: string): string {
  return statement.replaceAll(':SLUICE_SCHEMA', quoteSchema(schema))
}

/**
 * Applies pending migrations. Each migration runs as one atomic batch that first
 * takes a transaction-scoped lock, then records its version (a primary key): a
 * concurrent migrator waits on the lock and then finds the version taken, so two
 * processes migrating at once apply each migration exactly once.
 */
export async function migrate(
  db: Db,
  schema: string,
  migrations: readonly Migration[] = bundled,
): Promise<MigrateResult> {
  const q = quoteSchema(schema)
  await db.batch([
    lockKey(schema),
    { text: `CREATE SCHEMA IF NOT EXISTS ${q}`, values: [] },
    {
      text: `CREATE TABLE IF NOT EXISTS ${q}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      values: [],
    },
  ])
  const done = new Set(await appliedVersions(db, schema))
  const applied: number[] = []
  for (const migration of migrations) {
    if (done.has(migration.version)) continue
    try {
      await db.batch([
        lockKey(schema),
        {
          text: `INSERT INTO ${q}.migrations (version, name) VALUES ($1, $2)`,
          values: [migration.version, migration.name],
        },
        ...migration.statements.map((text) => ({ text: render(text, schema), values: [] })),
      ])
      applied.push(migration.version)
    } catch (error) {
      // Another process applied it while we waited for the lock; anything else is a real failure.
      if (sqlStateOf(error) !== PG.UNIQUE_VIOLATION) throw error
      if (!(await appliedVersions(db, schema)).includes(migration.version)) throw error
      done.add(migration.version)
    }
  }
  return { applied, version: Math.max(0, ...done, ...applied) }
}

export async function appliedVersions(db: Db, schema: string): Promise<number[]> {
  try {
    const { rows } = await db.query<{ version: number }>({
      text: `SELECT version FROM ${quoteSchema(schema)}.migrations ORDER BY version`,
      values: [],
    })
    return rows.map((row) => Number(row.version))
  } catch (error) {
    const state = sqlStateOf(error)
    if (state === PG.UNDEFINED_TABLE || state === PG.INVALID_SCHEMA_NAME) return []
    throw error
  }
}

export const latestVersion = (migrations: readonly Migration[] = bundled): number =>
  Math.max(0, ...migrations.map((m) => m.version))
