import { afterAll, beforeAll, expect, test } from 'vitest'
import { createSluice, fromPg, type Sluice } from '../../src/index.js'
import { migrations } from '../../src/migrate/migrations.generated.js'
import { migrate } from '../../src/migrate/run.js'
import { pruneArchive } from '../../src/sql/maintenance.js'
import { pgPool, uniqueSchema } from '../helpers/db.js'

// A database at migration 22, whose archive is a table of one row per job, upgraded to the
// archive of groups (0023): every archived job is still found by id, with what it ended with,
// and retention still prunes them.

const BEFORE = 22
const admin = pgPool(2)
const pool = pgPool(4)
const schema = uniqueSchema('arup')
const t = `"${schema}"`

let sluice: Sluice
beforeAll(async () => {
  await migrate(
    fromPg(pool),
    schema,
    migrations.filter((m) => m.version <= BEFORE),
  )
  sluice = createSluice({ database: fromPg(pool), schema, jobs: [] })
})
afterAll(async () => {
  await sluice?.close()
  await pool.end()
  await admin.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`)
  await admin.end()
})

test('jobs archived at migration 22 are found by id after the upgrade, and pruned by retention', async () => {
  // Two settles' jobs (ids 1020..1029 straddle a range boundary), one of them expired, one with a
  // failure before and a result, and one finished long ago.
  await admin.query(
    `INSERT INTO ${t}.archive (id, queue, name, payload, priority, attempts, max_attempts, status, enqueued_at,
                               duration_ms, finished_at, wait_ms, errors, invocation, result)
     SELECT i, 'q', 'work', jsonb_build_object('i', i), 16384, CASE WHEN i = 1021 THEN 2 ELSE 1 END, 5,
            CASE WHEN i = 1022 THEN 'expired' ELSE 'completed' END, now() - interval '1 hour', i - 1000,
            CASE WHEN i < 1025 THEN now() - interval '1 minute' ELSE now() END, 3,
            CASE WHEN i = 1021 THEN '[{"attempt": 1, "message": "first"}]'::jsonb END, 'drn_' || (i < 1025),
            CASE WHEN i = 1021 THEN '{"ok": true}'::jsonb END
     FROM generate_series(1020, 1029) i`,
  )
  await admin.query(`UPDATE ${t}.archive SET finished_at = now() - interval '30 days' WHERE id = 1020`)

  const result = await sluice.migrate()
  expect(result.applied).toEqual(migrations.filter((m) => m.version > BEFORE).map((m) => m.version))

  expect(
    (
      await admin.query(
        `SELECT bucket::int, status, invocation, cardinality(ids) AS n FROM ${t}.archive_groups
         ORDER BY bucket, status, invocation, n`,
      )
    ).rows,
  ).toEqual([
    { bucket: 0, status: 'completed', invocation: 'drn_true', n: 1 },
    { bucket: 0, status: 'completed', invocation: 'drn_true', n: 2 },
    { bucket: 0, status: 'expired', invocation: 'drn_true', n: 1 },
    { bucket: 1, status: 'completed', invocation: 'drn_false', n: 5 },
    { bucket: 1, status: 'completed', invocation: 'drn_true', n: 1 },
  ])

  const failedOnce = await sluice.inspect.job('1021')
  expect(failedOnce).toMatchObject({
    id: '1021',
    state: 'completed',
    payload: { i: 1021 },
    attempts: 2,
    result: { ok: true },
  })
  expect(failedOnce?.errors).toEqual([{ attempt: 1, message: 'first' }])
  expect(await sluice.result('1022')).toEqual({ state: 'expired', result: null, error: null })
  for (let id = 1020; id <= 1029; id++) expect((await sluice.inspect.job(String(id)))?.id).toBe(String(id))
  expect(await sluice.inspect.job('1030')).toBeNull()

  // Retention (7 days by default) takes the job finished 30 days ago, and only it.
  const { rows } = await admin.query(pruneArchive(t, 7 * 86_400_000, 10_000).text, [7 * 86_400_000, 10_000])
  expect(rows).toEqual([{ n: 1 }])
  expect(await sluice.inspect.job('1020')).toBeNull()
  expect((await admin.query(`SELECT count(*)::int AS n FROM ${t}.archive`)).rows).toEqual([{ n: 9 }])
})
