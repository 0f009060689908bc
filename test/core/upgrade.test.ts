import { afterAll, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, defineJob, fromPg } from '../../src/index.js'
import { functions } from '../../src/migrate/functions.generated.js'
import { migrations } from '../../src/migrate/migrations.generated.js'
import { migrate } from '../../src/migrate/run.js'
import { databaseUrl, pgPool, uniqueSchema } from '../helpers/db.js'

// A database migrated by 0.1.0 (migrations 1..8, unchanged since that release, with the function
// bodies they define) upgrades to the current migrations and function files, keeps its rows, and
// drains them.

const admin = pgPool(2)
const schemas: string[] = []
afterAll(async () => {
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

const plain = defineJob({ name: 'plain', input: z.object({ n: z.number() }), run: () => {} })
const keyed = defineJob({
  name: 'keyed',
  input: z.object({ n: z.number() }),
  unique: { key: () => 'one-at-a-time', strategy: 'while-executing' },
  run: () => {},
})

test('a 0.1.0 schema with jobs in it upgrades and drains', async () => {
  const schema = uniqueSchema('up')
  schemas.push(schema)
  const pool = pgPool(1)
  try {
    const released = migrations.filter((m) => m.version <= 8)
    expect(await migrate(fromPg(pool), schema, released)).toMatchObject({ version: 8, functions: [] })
    const q = `"${schema}"`
    // Waiting jobs, same-key jobs, and one whose drain died holding its lease (now run out).
    await admin.query(
      `INSERT INTO ${q}.jobs (queue, name, payload, exclusive_key)
       SELECT 'default', 'plain', jsonb_build_object('n', n), NULL FROM generate_series(1, 5) n
       UNION ALL
       SELECT 'default', 'keyed', jsonb_build_object('n', n), 'one-at-a-time' FROM generate_series(1, 3) n`,
    )
    await admin.query(
      `INSERT INTO ${q}.jobs (queue, name, payload, attempts, lease_token, leased_by, run_at)
       VALUES ('default', 'plain', '{"n": 0}', 1, gen_random_uuid(), 'dead-drain', now() - interval '1 minute')`,
    )
    const sluice = createSluice({ database: databaseUrl, schema, jobs: [plain, keyed] })
    try {
      const result = await sluice.migrate()
      expect(result.applied).toEqual(migrations.filter((m) => m.version > 8).map((m) => m.version))
      expect(result.functions).toEqual(functions.map((f) => f.name))
      const { rows } = await admin.query(`SELECT name, hash FROM ${q}.function_sources ORDER BY name`)
      expect(rows).toEqual(functions.map((f) => ({ name: f.name, hash: f.hash })))
      const summary = await sluice.drain()
      expect(summary).toMatchObject({ claimed: 9, completed: 9, stoppedBy: 'empty', remainingReady: 0 })
      expect((await sluice.migrate()).functions).toEqual([])
    } finally {
      await sluice.close()
    }
  } finally {
    await pool.end()
  }
})
