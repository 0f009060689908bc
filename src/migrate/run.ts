import { sqlStateOf } from '../db/errors.js'
import { SQLSTATE } from '../db/sqlstate.js'
import type { Db, Statement } from '../db/types.js'
import { ConfigError } from '../errors.js'
import { quoteSchema } from '../names.js'
import { functions as bundledFunctions } from './functions.generated.js'
import { migrations as bundled } from './migrations.generated.js'
import type { FunctionSource, Migration } from './types.js'

export interface MigrateResult {
  /** Versions this call applied. */
  applied: number[]
  /** The schema's version afterwards. */
  version: number
  /** Function files (migrations/functions) this call applied: new, or changed since last applied. */
  functions: string[]
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
 * Applies pending migrations and the function files whose content changed, in one atomic batch
 * that first takes a transaction-scoped lock, then records each migration's version and each
 * file's hash (primary keys): a concurrent migrator waits on the lock and then finds them taken,
 * rolls back, reads what is applied again and finds nothing left to do, so two processes
 * migrating at once apply each change exactly once. Migrations and function files commit
 * together: a function file written for a new index never runs against the schema without it,
 * nor an old file against the new schema (a claim in between would find its index gone), and a
 * failure in either applies neither.
 *
 * Migrations keep tables and indexes; function bodies live in migrations/functions. A caller that passes
 * its own `migrations` (an older release's, in tests) gets no function files unless it passes them.
 */
export async function migrate(
  db: Db,
  schema: string,
  migrations: readonly Migration[] = bundled,
  functions: readonly FunctionSource[] = migrations === bundled ? bundledFunctions : [],
): Promise<MigrateResult> {
  // A lean function (the drain, maintenance) is bundled without the migrations' SQL: see
  // leaveOut in src/build/build.ts. Its database is migrated at deploy instead.
  if (
    (migrations as readonly Migration[] | null) === null ||
    (functions as readonly FunctionSource[] | null) === null
  )
    throw new ConfigError(
      "This function was built without Sluice's migrations: run `sluice migrate` (or sluice.migrate() from a " +
        'deploy step) against its database instead.',
    )
  const q = quoteSchema(schema)
  await db.batch([
    lockKey(schema),
    { text: `CREATE SCHEMA IF NOT EXISTS ${q}`, values: [] },
    {
      text: `CREATE TABLE IF NOT EXISTS ${q}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      values: [],
    },
    {
      // One row per function file: the hash of the content last applied.
      text: `CREATE TABLE IF NOT EXISTS ${q}.function_sources (name text PRIMARY KEY, hash text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      values: [],
    },
  ])
  let tried = ''
  for (;;) {
    const done = new Set(await appliedVersions(db, schema))
    const current = await functionHashes(db, schema)
    const pending = migrations.filter((m) => !done.has(m.version))
    const changed = functions.filter((f) => current.get(f.name) !== f.hash)
    const version = Math.max(0, ...done, ...pending.map((m) => m.version))
    if (pending.length === 0 && changed.length === 0) return { applied: [], version, functions: [] }
    try {
      await db.batch([
        lockKey(schema),
        ...pending.flatMap((migration) => [
          {
            text: `INSERT INTO ${q}.migrations (version, name) VALUES ($1, $2)`,
            values: [migration.version, migration.name],
          },
          ...migration.statements.map((text) => ({ text: render(text, schema), values: [] })),
        ]),
        ...changed.flatMap((f) => [
          // The file's old hash goes and the new one is inserted: a migrator that applied the
          // same content first makes the insert fail.
          {
            text: `DELETE FROM ${q}.function_sources WHERE name = $1 AND hash <> $2`,
            values: [f.name, f.hash],
          },
          {
            text: `INSERT INTO ${q}.function_sources (name, hash) VALUES ($1, $2)`,
            values: [f.name, f.hash],
          },
          ...f.statements.map((text) => ({ text: render(text, schema), values: [] })),
        ]),
      ])
      return { applied: pending.map((m) => m.version), version, functions: changed.map((f) => f.name) }
    } catch (error) {
      // Another process applied some of it while we waited for the lock: look again. The same
      // work failing twice is a real failure (a migration's own unique index, say).
      const attempt = JSON.stringify([pending.map((m) => m.version), changed.map((f) => f.name)])
      if (sqlStateOf(error) !== SQLSTATE.UNIQUE_VIOLATION || attempt === tried) throw error
      tried = attempt
    }
  }
}

async function functionHashes(db: Db, schema: string): Promise<Map<string, string>> {
  const { rows } = await db.query<{ name: string; hash: string }>({
    text: `SELECT name, hash FROM ${quoteSchema(schema)}.function_sources`,
    values: [],
  })
  return new Map(rows.map((row) => [row.name, row.hash]))
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
    if (state === SQLSTATE.UNDEFINED_TABLE || state === SQLSTATE.INVALID_SCHEMA_NAME) return []
    throw error
  }
}

/** The newest migration this build knows; undefined in a function bundled without them. */
export const knownVersion = (): number | undefined =>
  (bundled as readonly Migration[] | null) === null ? undefined : latestVersion()

export const latestVersion = (migrations: readonly Migration[] = bundled): number =>
  Math.max(0, ...migrations.map((m) => m.version))
