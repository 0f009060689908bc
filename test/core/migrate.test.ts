import { readFile } from 'node:fs/promises'
import { afterAll, expect, test } from 'vitest'
import { render } from '../../scripts/gen-migrations.js'
import { createSluice } from '../../src/index.js'
import { migrations } from '../../src/migrate/migrations.generated.js'
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

test('six processes migrating one schema at once apply each migration exactly once', async () => {
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
