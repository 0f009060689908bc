import { readFile } from 'node:fs/promises'
import { afterAll, expect, test } from 'vitest'
import { render, renderFunctions } from '../../scripts/gen-migrations.js'
import { createSluice, type Db, fromPg } from '../../src/index.js'
import { functions } from '../../src/migrate/functions.generated.js'
import { migrations } from '../../src/migrate/migrations.generated.js'
import { appliedVersions, migrate } from '../../src/migrate/run.js'
import { splitStatements } from '../../src/migrate/split.js'
import { databaseUrl, pgPool, uniqueSchema } from '../helpers/db.js'

const admin = pgPool(2)
const schemas: string[] = []
afterAll(async () => {
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

test('the compiled migrations match migrations/*.sql', async () => {
  const generated = await readFile(
    new URL('../../src/migrate/migrations.generated.ts', import.meta.url),
    'utf8',
  )
  expect(generated).toBe(await render())
  expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1))
})

test('the compiled function sources match migrations/functions/*.sql', async () => {
  const generated = await readFile(
    new URL('../../src/migrate/functions.generated.ts', import.meta.url),
    'utf8',
  )
  expect(generated).toBe(await renderFunctions())
  expect(functions.length).toBeGreaterThan(0)
})

test('six processes migrating one schema at once apply each migration and function file exactly once', async () => {
  const schema = uniqueSchema('mig')
  schemas.push(schema)
  const sluices = Array.from({ length: 6 }, () => createSluice({ database: databaseUrl, schema }))
  const results = await Promise.all(sluices.map((s) => s.migrate()))
  await Promise.all(sluices.map((s) => s.close()))
  const applied = results.flatMap((r) => r.applied).sort((a, b) => a - b)
  expect(applied).toEqual(migrations.map((m) => m.version))
  expect(new Set(results.map((r) => r.version))).toEqual(new Set([migrations.at(-1)!.version]))
  const { rows } = await admin.query(`SELECT version FROM "${schema}".migrations ORDER BY version`)
  expect(rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version))
  const names = functions.map((f) => f.name)
  expect(results.flatMap((r) => r.functions).sort()).toEqual([...names].sort())
  const { rows: recorded } = await admin.query(
    `SELECT name, hash FROM "${schema}".function_sources ORDER BY name`,
  )
  expect(recorded).toEqual(
    functions.map((f) => ({ name: f.name, hash: f.hash })).sort((a, b) => (a.name < b.name ? -1 : 1)),
  )
})

test('a changed function file is applied once by six processes at once; an unchanged one is not applied again', async () => {
  const schema = uniqueSchema('fn')
  schemas.push(schema)
  const pools = Array.from({ length: 6 }, () => pgPool(1))
  const dbs = pools.map((pool) => fromPg(pool))
  try {
    expect((await migrate(dbs[0]!, schema)).functions).toEqual(functions.map((f) => f.name))
    expect((await migrate(dbs[0]!, schema)).functions).toEqual([])
    // A new version of one file: its body changes what the function returns.
    const probe = (n: number) => ({
      name: 'zz_probe',
      hash: `probe-${n}`,
      statements: [
        `CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.zz_probe() RETURNS integer LANGUAGE sql AS $fn$ SELECT ${n} $fn$`,
        // Counts how many times this version's statements ran.
        `CREATE TABLE IF NOT EXISTS :SLUICE_SCHEMA.zz_runs (n integer)`,
        `INSERT INTO :SLUICE_SCHEMA.zz_runs VALUES (${n})`,
      ],
    })
    for (const n of [1, 2]) {
      const results = await Promise.all(
        dbs.map((db) => migrate(db, schema, migrations, [...functions, probe(n)])),
      )
      expect(results.flatMap((r) => r.functions)).toEqual(['zz_probe'])
      const { rows } = await admin.query(`SELECT "${schema}".zz_probe() AS v`)
      expect(rows).toEqual([{ v: n }])
    }
    const { rows: runs } = await admin.query(`SELECT n FROM "${schema}".zz_runs ORDER BY n`)
    expect(runs.map((r) => r.n)).toEqual([1, 2])
  } finally {
    await Promise.all(pools.map((pool) => pool.end()))
  }
})

/**
 * A schema migrated to today's version on a connection of its own, for `use`, which gets the
 * version a new migration would take. The schema is dropped with the others after the file.
 */
async function afterToday(prefix: string, use: (db: Db, schema: string, next: number) => Promise<void>) {
  const schema = uniqueSchema(prefix)
  schemas.push(schema)
  const pool = pgPool(1)
  const db = fromPg(pool)
  try {
    await migrate(db, schema)
    await use(db, schema, migrations.at(-1)!.version + 1)
  } finally {
    await pool.end()
  }
}

test('pending migrations commit with the changed function files, or not at all', async () => {
  // A function file that matches an index only a new migration creates must never run against
  // the schema without it, nor the old file against the new schema: a claim in between would
  // find its index gone. Both commit in one transaction; a failure in either applies neither.
  await afterToday('atomic', async (db, schema, next) => {
    const migration = {
      version: next,
      name: 'zz_table',
      statements: ['CREATE TABLE :SLUICE_SCHEMA.zz_table (n integer)'],
    }
    const file = (body: string) => ({
      name: 'zz_reader',
      hash: body,
      statements: [
        `CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.zz_reader() RETURNS bigint LANGUAGE sql AS $fn$ ${body} $fn$`,
      ],
    })
    const exists = async () =>
      (await admin.query(`SELECT to_regclass('"${schema}".zz_table') IS NOT NULL AS t`)).rows[0].t
    await expect(
      migrate(
        db,
        schema,
        [...migrations, migration],
        [...functions, file('SELECT count(*) FROM no_such_table')],
      ),
    ).rejects.toThrow(/no_such_table/)
    expect(await exists()).toBe(false)
    expect(await appliedVersions(db, schema)).not.toContain(next)

    const fixed = file(`SELECT count(*) FROM "${schema}".zz_table`)
    const result = await migrate(db, schema, [...migrations, migration], [...functions, fixed])
    expect(result).toMatchObject({ applied: [next], version: next, functions: ['zz_reader'] })
    expect(await exists()).toBe(true)
    expect((await admin.query(`SELECT "${schema}".zz_reader() AS n`)).rows).toEqual([{ n: '0' }])
  })
})

test("a migration's own unique violation fails the migrate, once retried, and applies nothing", async () => {
  // A unique violation usually means another migrator got there first (it recorded a version or
  // a hash): migrate() then reads what is applied and goes on. The same work failing again is
  // the migration's own error.
  await afterToday('dup', async (db, schema, next) => {
    const duplicate = {
      version: next,
      name: 'zz_duplicate',
      statements: [
        'CREATE TABLE :SLUICE_SCHEMA.zz_once (n integer PRIMARY KEY)',
        'INSERT INTO :SLUICE_SCHEMA.zz_once VALUES (1), (1)',
      ],
    }
    await expect(migrate(db, schema, [...migrations, duplicate], functions)).rejects.toThrow(
      /duplicate key value violates unique constraint "zz_once_pkey"/,
    )
    expect(await appliedVersions(db, schema)).not.toContain(next)
    const { rows } = await admin.query(`SELECT to_regclass('"${schema}".zz_once') IS NULL AS gone`)
    expect(rows).toEqual([{ gone: true }])
  })
})

test('the statement splitter respects quotes, dollar quotes and comments', () => {
  const sql = `-- a comment; with a semicolon
CREATE TABLE a (x text DEFAULT 'it''s; fine');
CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $body$ BEGIN RETURN 1; END $body$;
/* block; comment */ SELECT "odd;name" FROM a;
SELECT $1::int;
-- trailing comment only`
  const parts = splitStatements(sql)
  expect(parts).toHaveLength(4)
  expect(parts[1]).toContain('RETURN 1; END $body$')
  expect(parts[3]).toBe('SELECT $1::int')
})
