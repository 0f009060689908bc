import { spawnSync } from 'node:child_process'
import pg from 'pg'
import { afterEach, expect, test } from 'vitest'
import * as z from 'zod'
import { dueSlots, runRecurring } from '../../src/controls/recurring.js'
import { createSluice, type Db, defineJob, defineRecurring, fromPg } from '../../src/index.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
const pools: pg.Pool[] = []
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()))
  await env?.cleanup()
  env = undefined
})

const report = defineJob({ name: 'report', input: z.object({ kind: z.string() }), run: () => {} })
const everyMinute = defineRecurring({
  name: 'minutely-report',
  cron: '* * * * *',
  job: report,
  input: { kind: 'minutely' },
  missed: { backfill: 10 },
})

async function tenSlotsDue(e: TestSluice): Promise<void> {
  await e.sluice.maintain() // first sight: the task is recorded, nothing is backfilled
  expect(await e.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: 0 }])
  await e.sql(`UPDATE $schema.recurring SET last_slot = date_trunc('minute', now()) - interval '10 minutes'`)
  await e.sql(`UPDATE $schema.maintenance SET next_run_at = now() - interval '1 ms'`)
}

test('two maintenance calls at once over 10 due slots enqueue each slot exactly once', async () => {
  env = await makeSluice({ jobs: [report], recurring: [everyMinute] })
  await tenSlotsDue(env)
  const other = createSluice({
    database: databaseUrl,
    schema: env.schema,
    jobs: [report],
    recurring: [everyMinute],
  })
  await Promise.all([env.sluice.maintain(), other.maintain()])
  await other.close()
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: 10 }])
  const runs = await env.sluice.recurringRuns('minutely-report')
  expect(runs).toHaveLength(10)
  expect(new Set(runs.map((r) => r.slot.toISOString())).size).toBe(10)
  expect(runs.every((r) => r.status === 'enqueued' && r.jobId)).toBe(true)
})

test('the slot key alone keeps four unsynchronised passes from enqueuing a slot twice', async () => {
  env = await makeSluice({ jobs: [report], recurring: [everyMinute] })
  await tenSlotsDue(env)
  const dbs: Db[] = Array.from({ length: 4 }, () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 })
    pools.push(pool)
    return fromPg(pool)
  })
  const t = `"${env.schema}"`
  await Promise.all(dbs.map((db) => runRecurring(db, t, [everyMinute], 1 << 20)))
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: 10 }])
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.recurring_runs`)).toEqual([{ n: 10 }])
})

test('missed slots: skip enqueues only the latest; removed definitions stop', async () => {
  const skipping = defineRecurring({
    name: 'skipper',
    cron: '*/5 * * * *',
    job: report,
    input: { kind: 'five' },
  })
  env = await makeSluice({ jobs: [report], recurring: [skipping] })
  await env.sluice.maintain()
  await env.sql(`UPDATE $schema.recurring SET last_slot = now() - interval '1 hour'`)
  await env.sql(`UPDATE $schema.maintenance SET next_run_at = now() - interval '1 ms'`)
  await env.sluice.maintain()
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: 1 }])

  const without = createSluice({ database: databaseUrl, schema: env.schema, jobs: [report], recurring: [] })
  await env.sql(`UPDATE $schema.maintenance SET next_run_at = now() - interval '1 ms'`)
  await without.maintain()
  await without.close()
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.recurring`)).toEqual([{ n: 0 }])
})

test('slots follow the time zone, and bad definitions fail at startup', () => {
  const paris = defineRecurring({
    name: 'paris-3am',
    cron: '0 3 * * *',
    timezone: 'Europe/Paris',
    job: report,
    input: { kind: 'x' },
  })
  const slots = dueSlots(paris, new Date('2026-11-19T12:00:00Z'), new Date('2026-11-21T12:00:00Z'))
  expect(slots.map((d) => d.toISOString())).toEqual(['2026-11-21T02:00:00.000Z'])
  const backfilling = defineRecurring({
    name: 'paris-backfill',
    cron: '0 3 * * *',
    timezone: 'Europe/Paris',
    job: report,
    input: { kind: 'x' },
    missed: { backfill: 5 },
  })
  expect(
    dueSlots(backfilling, new Date('2026-11-19T12:00:00Z'), new Date('2026-11-21T12:00:00Z')),
  ).toHaveLength(2)
  expect(() =>
    defineRecurring({ name: 'bad', cron: 'every day', job: report, input: { kind: 'x' } }),
  ).toThrow(/Recurring task "bad"/)
  expect(() =>
    defineRecurring({
      name: 'bad',
      cron: '* * * * *',
      timezone: 'Mars/Olympus',
      job: report,
      input: { kind: 'x' },
    }),
  ).toThrow('Recurring task "bad": unknown time zone "Mars/Olympus"')
  // A zone's name is checked whatever its case, as Intl reads it; a DST-less alias too.
  expect(
    dueSlots(
      defineRecurring({
        name: 'lower',
        cron: '0 3 * * *',
        timezone: 'europe/paris',
        job: report,
        input: { kind: 'x' },
      }),
      new Date('2026-11-19T12:00:00Z'),
      new Date('2026-11-21T12:00:00Z'),
    ).map((d) => d.toISOString()),
  ).toEqual(['2026-11-21T02:00:00.000Z'])
  expect(() =>
    defineRecurring({
      name: 'plain',
      cron: '* * * * *',
      timezone: { zone: 'x' } as unknown as string,
      job: report,
      input: { kind: 'x' },
    }),
  ).toThrow(/Invalid recurring task/)
  expect(() => defineRecurring({ name: 'bad', cron: '* * * * *', job: report, input: { kind: 1 } })).toThrow(
    /does not fit/,
  )
  const stranger = defineJob({ name: 'stranger', input: z.object({}), run: () => {} })
  expect(() =>
    createSluice({
      database: 'postgres://x/y',
      jobs: [report],
      recurring: [defineRecurring({ name: 's', cron: '* * * * *', job: stranger, input: {} })],
    }),
  ).toThrow(/not in `jobs`/)
})

test('defining a task costs a cold start no Intl formatter, in any zone; a UTC task never makes one', () => {
  // A fresh process: croner keeps the formatters it made, and this file's tasks made some.
  const run = (...zone: string[]) => {
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'test/fixtures/recurring-intl.ts', ...zone],
      {
        encoding: 'utf8',
      },
    )
    expect(child.status, child.stderr).toBe(0)
    return JSON.parse(child.stdout) as { defining: number; made: number; slots: string[] }
  }
  expect(run()).toEqual({ defining: 0, made: 0, slots: ['2026-11-21T03:00:00.000Z'] })
  expect(run('UTC')).toEqual({ defining: 0, made: 0, slots: ['2026-11-21T03:00:00.000Z'] })
  // Another zone's formatter (and its zone data, about 28 ms) waits for the first read of a slot.
  const paris = run('Europe/Paris')
  expect(paris.defining).toBe(0)
  expect(paris.slots).toEqual(['2026-11-21T02:00:00.000Z'])
  expect(paris.made).toBeGreaterThan(0)
  // An alias outside the runtime's list of canonical names is still a zone.
  expect(run('Asia/Calcutta').slots).toEqual(['2026-11-20T21:30:00.000Z'])
})
