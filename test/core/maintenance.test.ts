import { spawnSync } from 'node:child_process'
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, defineJob } from '../../src/index.js'
import { databaseUrl, endLeasesSql, makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const poison = defineJob({ name: 'poison', input: z.object({}), retry: 2, run: () => {} })

function crashDrain(schema: string): number | null {
  const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/crashing-drain.ts'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, SLUICE_SCHEMA: schema },
    encoding: 'utf8',
    timeout: 30_000,
  })
  return child.status ?? (child.signal === 'SIGKILL' ? 137 : null)
}

test('two overlapping maintenance calls run each task once; a duplicate a second later is a no-op', async () => {
  env = await makeSluice({ jobs: [] })
  const other = createSluice({ database: databaseUrl, schema: env.schema })
  const [a, b] = await Promise.all([env.sluice.maintain(), other.maintain()])
  for (const task of ['reap-invocations', 'bury-exhausted', 'prune-archive']) {
    const runs = [a, b].map((report) => report.tasks.find((t) => t.task === task)!.ran)
    expect(runs.filter(Boolean)).toHaveLength(1)
  }
  await new Promise((resolve) => setTimeout(resolve, 1_000))
  const again = await other.maintain()
  expect(again.tasks.every((t) => !t.ran)).toBe(true)
  // Once the interval has passed (the test moves the task clock), the tasks run again.
  await env.sql(`UPDATE $schema.maintenance SET next_run_at = now() - interval '1 ms'`)
  expect((await other.maintain()).tasks.every((t) => t.ran)).toBe(true)
  await other.close()
})

test('a killed drain: its lease is reaped and its job re-delivered after the visibility time', async () => {
  env = await makeSluice({ jobs: [poison] })
  const { id } = await env.sluice.enqueue(poison, {})
  expect(crashDrain(env.schema)).toBe(137)
  const [leased] = await env.sql<{ attempts: number; leased: boolean; visible: boolean }>(
    `SELECT attempts, lease_token IS NOT NULL AS leased, lease_until <= now() AS visible FROM $schema.jobs WHERE id = $1`,
    [id],
  )
  expect(leased).toEqual({ attempts: 1, leased: true, visible: false })
  expect(await env.sql(`SELECT 1 FROM $schema.invocations`)).toHaveLength(1)
  // Nothing is re-delivered while the lease holds.
  expect(await env.sluice.drain()).toMatchObject({ claimed: 0 })

  // Time passes: the lease and the invocation expire (moved by the test, not slept).
  await env.sql(endLeasesSql('$schema', 'id = $1'), [id])
  await env.sql(`UPDATE $schema.invocations SET expires_at = now() - interval '1 ms'`)
  const report = await env.sluice.maintain()
  expect(report.tasks.find((t) => t.task === 'reap-invocations')).toMatchObject({ ran: true, rows: 1 })
  expect(await env.sql(`SELECT 1 FROM $schema.invocations`)).toHaveLength(0)
  expect(await env.sluice.drain()).toMatchObject({ claimed: 1, completed: 1 })
  expect(await env.sql(`SELECT attempts FROM $schema.archive WHERE id = $1`, [id])).toEqual([{ attempts: 2 }])
})

test('a poison job that crashes the function every time ends in the dead letters via maintenance', async () => {
  env = await makeSluice({ jobs: [poison] })
  const { id } = await env.sluice.enqueue(poison, {})
  for (let attempt = 1; attempt <= 2; attempt++) {
    expect(crashDrain(env.schema)).toBe(137)
    await env.sql(endLeasesSql('$schema', 'id = $1'), [id])
  }
  // Out of attempts with an expired lease: never claimed again, not even by a crashing drain.
  expect(crashDrain(env.schema)).toBe(0)
  expect(await env.sql(`SELECT attempts FROM $schema.jobs WHERE id = $1`, [id])).toEqual([{ attempts: 2 }])
  const report = await env.sluice.maintain()
  expect(report.tasks.find((t) => t.task === 'bury-exhausted')).toMatchObject({ ran: true, rows: 1 })
  const [dead] = await env.sluice.deadLetters.list()
  expect(dead).toMatchObject({
    id,
    attempts: 2,
    lastError: { name: 'LeaseExpired', code: 'LEASE_EXPIRED', attempt: 2 },
  })
  expect(await env.sql(`SELECT 1 FROM $schema.jobs`)).toEqual([])
})

test('archive retention prunes in bounded slices', async () => {
  env = await makeSluice({ jobs: [], maintenance: { archiveRetentionMs: 60_000, batchSize: 100 } })
  await env.sql(
    `INSERT INTO $schema.archive (id, queue, name, payload, priority, attempts, max_attempts, status, enqueued_at, finished_at)
     SELECT i, 'q', 'n', '{}', 1, 1, 1, 'completed', now(), now() - CASE WHEN i <= 250 THEN interval '1 hour' ELSE interval '1 second' END
     FROM generate_series(1, 300) i`,
  )
  const pruned: number[] = []
  for (let run = 0; run < 4; run++) {
    await env.sql(`UPDATE $schema.maintenance SET next_run_at = now() - interval '1 ms'`)
    const report = await env.sluice.maintain()
    pruned.push(report.tasks.find((t) => t.task === 'prune-archive')!.rows)
  }
  expect(pruned).toEqual([100, 100, 50, 0])
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.archive`)).toEqual([{ n: 50 }])
})
