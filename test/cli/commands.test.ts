import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { latestVersion } from '../../src/migrate/run.js'
import { exampleConfig, fewAtATime, runCli } from '../helpers/cli.js'
import { databaseUrl, pgPool, uniqueSchema } from '../helpers/db.js'

// The CLI end to end, as a spawned process on the test database, in a schema of its own. Each
// command is a Node process that loads the CLI through tsx: a second or two each on a quiet
// machine, several times that on a loaded one, and a test here runs up to a dozen of them.
const SPAWNS = { timeout: 180_000 }
const schema = uniqueSchema('cli')
const env = { DATABASE_URL: databaseUrl, SLUICE_SCHEMA: schema }
const sluice = (...args: string[]) => runCli(['--config', exampleConfig, ...args], { env })
const userId = `cli_${schema}`
const admin = pgPool(2)

interface DrainResult {
  claimed: number
  completed: number
  deadLettered: number
  runs: { name: string; id: string; attempt: number; outcome: string; durationMs: number }[]
}
interface QueueRow {
  queue: string
  ready: number
  delayed: number
  inFlight: number
  deadLettered: number
  oldestReadyAgeSeconds: number
  paused: boolean
}

const depth = async (queue: string): Promise<QueueRow> => {
  const run = await sluice('queues', '--json')
  expect(run.code).toBe(0)
  return run.json<{ queues: QueueRow[] }>().queues.find((q) => q.queue === queue)!
}

beforeAll(async () => {
  // Before migrate: every command that needs the tables says so, and exits 3.
  const run = await sluice('status', '--json')
  expect(run.code).toBe(3)
  expect(run.json()).toMatchObject({ error: { code: 'MIGRATIONS_REQUIRED' } })
  expect(run.stderr).toContain('sluice migrate')
})

afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin
    .query('DELETE FROM example.outbox WHERE dedupe_key LIKE $1', [`welcome:${userId}%`])
    .catch(() => {})
  await admin.end()
})

describe('sluice CLI on PostgreSQL', SPAWNS, () => {
  test('migrate applies the migrations and the example setup, then has nothing to do', async () => {
    const first = await sluice('migrate', '--json')
    expect(first.code).toBe(0)
    const latest = latestVersion()
    expect(first.json()).toMatchObject({
      schema,
      applied: Array.from({ length: latest }, (_, i) => i + 1),
      version: latest,
      setup: true,
    })
    const again = await sluice('migrate')
    expect(again.code).toBe(0)
    expect(again.stdout).toContain(`up to date (version ${latest})`)
    const { rows } = await admin.query(`SELECT to_regclass('example.outbox')::text AS t`)
    expect(rows[0].t).toBe('example.outbox')
  })

  test('enqueue, queues and drain: the job runs and its effect lands', async () => {
    const enqueued = await sluice(
      'enqueue',
      'welcome-email',
      JSON.stringify({ userId, email: 'ada@example.com' }),
      '--json',
    )
    expect(enqueued.code).toBe(0)
    const { id, queue } = enqueued.json<{ id: string; queue: string }>()
    expect(queue).toBe('emails')
    expect((await depth('emails')).ready).toBe(1)

    const delayed = await sluice(
      'enqueue',
      'generate-report',
      '{"day":"2026-01-31"}',
      '--delay',
      '600000',
      '--json',
    )
    expect(delayed.code).toBe(0)
    expect(await depth('reports')).toMatchObject({ ready: 0, delayed: 1 })

    const drained = await sluice('drain', '--queues', 'emails', '--json')
    expect(drained.code).toBe(0)
    const summary = drained.json<DrainResult>()
    expect(summary).toMatchObject({ claimed: 1, completed: 1, deadLettered: 0 })
    expect(summary.runs).toEqual([
      expect.objectContaining({ name: 'welcome-email', id, attempt: 1, outcome: 'completed' }),
    ])
    const { rows } = await admin.query('SELECT recipient FROM example.outbox WHERE dedupe_key = $1', [
      `welcome:${userId}`,
    ])
    expect(rows).toEqual([{ recipient: 'ada@example.com' }])
    const archived = await admin.query(`SELECT status FROM "${schema}".archive WHERE id = $1`, [id])
    expect(archived.rows).toEqual([{ status: 'completed' }])
  })

  test('input can come from stdin; a human drain lists each run and the counts', async () => {
    const piped = await runCli(['--config', exampleConfig, 'enqueue', 'welcome-email', '-'], {
      env,
      input: JSON.stringify({ userId: `${userId}_2`, email: 'bo@example.com' }),
    })
    expect(piped.code).toBe(0)
    expect(piped.stdout).toMatch(/^Enqueued welcome-email on queue emails: job \d+\.\n$/)
    const run = await sluice('drain', '--max-jobs', '5')
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/welcome-email #\d+ {2}attempt 1\/5 {2}completed/)
    expect(run.stdout).toContain('1 completed')
  })

  test('dead letters: list, retry, discard', async () => {
    const enqueued = await sluice(
      'enqueue',
      'resize-image',
      '{"imageId":"missing-cli","width":320}',
      '--json',
    )
    const { id } = enqueued.json<{ id: string }>()
    const drained = (await sluice('drain', '--queues', 'images', '--json')).json<DrainResult>()
    expect(drained).toMatchObject({ claimed: 1, deadLettered: 1 })
    expect(drained.runs[0]).toMatchObject({ outcome: 'dead-lettered' })

    const [listed, human] = await Promise.all([sluice('dlq', 'list', '--json'), sluice('dlq', 'list')])
    expect(listed.code).toBe(0)
    const { deadLetters } = listed.json<{
      deadLetters: { id: string; name: string; lastError: { message: string } }[]
    }>()
    expect(deadLetters).toHaveLength(1)
    expect(deadLetters[0]).toMatchObject({
      id,
      name: 'resize-image',
      lastError: { message: expect.stringContaining('does not exist') },
    })
    expect(human.stdout).toContain('PermanentJobError: Image missing-cli does not exist')

    const retried = await sluice('dlq', 'retry', '--id', id, '--json')
    expect(retried.code).toBe(0)
    expect(retried.json()).toMatchObject({ action: 'retry', ids: [id], missing: [] })
    const [images, notThere] = await Promise.all([
      depth('images'),
      sluice('dlq', 'retry', '--id', '999999999', '--json'),
    ])
    expect(images).toMatchObject({ ready: 1, deadLettered: 0 })
    expect(notThere.code).toBe(1)
    expect(notThere.json()).toMatchObject({ ids: [], missing: ['999999999'] })

    expect((await sluice('drain', '--json')).json<DrainResult>()).toMatchObject({ deadLettered: 1 })
    const discarded = await sluice('dlq', 'discard', '--queue', 'images', '--json')
    expect(discarded.code).toBe(0)
    expect(discarded.json()).toMatchObject({ action: 'discard', ids: [id] })
    expect((await sluice('dlq', 'list', '--json')).json()).toEqual({ action: 'list', deadLetters: [] })
  })

  test('maintain runs the due tasks; status shows them, the queues and the schema', async () => {
    const maintained = await sluice('maintain', '--json')
    expect(maintained.code).toBe(0)
    const report = maintained.json<{ tasks: { task: string; ran: boolean }[] }>()
    const tasks = report.tasks.map((t) => t.task).sort()
    expect(tasks).toEqual(
      expect.arrayContaining(['bury-exhausted', 'prune-archive', 'reap-invocations', 'recurring']),
    )
    expect(report.tasks.every((t) => t.ran)).toBe(true)

    const status = await sluice('status', '--json')
    expect(status.code).toBe(0)
    const s = status.json<{
      schema: string
      version: number
      database: string
      jobs: { name: string }[]
      queues: QueueRow[]
      invocations: unknown[]
      maintenance: { task: string; nextRunAt: string }[]
    }>()
    expect(s).toMatchObject({ schema, version: latestVersion(), invocations: [] })
    expect(s.database).toMatch(/^PostgreSQL at /)
    expect(s.database).not.toContain('postgres:postgres@')
    expect(s.jobs.map((j) => j.name)).toEqual([
      'welcome-email',
      'generate-report',
      'resize-image',
      'order-audit',
      'order-fulfilment',
    ])
    expect(s.queues.map((q) => q.queue)).toEqual(['emails', 'events', 'fulfilment', 'images', 'reports'])
    expect(s.maintenance.map((m) => m.task).sort()).toEqual(tasks)
    const human = await sluice('status')
    expect(human.stdout).toContain('Maintenance')
    expect(human.stdout).toMatch(/reports +0 +1 /)
  })
})

describe('errors a person meets', SPAWNS, () => {
  test('pause and resume: a paused queue is skipped by drains until resumed', async () => {
    const paused = await sluice('pause', 'reports', '--json')
    expect(paused.code).toBe(0)
    expect(paused.json()).toEqual({ queue: 'reports', paused: true })
    expect((await depth('reports')).paused).toBe(true)
    const day = '2026-01-02'
    expect((await sluice('enqueue', 'generate-report', JSON.stringify({ day }), '--json')).code).toBe(0)
    const skipped = await sluice('drain', '--queues', 'reports', '--json')
    expect(skipped.json<DrainResult>()).toMatchObject({ claimed: 0 })
    const resumed = await sluice('resume', 'reports', '--json')
    expect(resumed.json()).toEqual({ queue: 'reports', paused: false, known: true })
    const ran = await sluice('drain', '--queues', 'reports', '--json')
    expect(ran.json<DrainResult>(), ran.stdout + ran.stderr).toMatchObject({ claimed: 1, completed: 1 })
    expect((await sluice('pause', "bad'queue")).code).toBe(2)
    expect((await sluice('pause')).code).toBe(2)
  })

  test('invalid JSON, a zod failure with its path, unknown job, queue and command, bad flags', async () => {
    const [syntax, zod, nested, unknown, queue, flag, noFilter, unknownCommand] = await fewAtATime([
      () => sluice('enqueue', 'welcome-email', '{userId: 1}'),
      () =>
        sluice('enqueue', 'welcome-email', JSON.stringify({ userId: 'u', email: 'not-an-email' }), '--json'),
      () => sluice('enqueue', 'resize-image', '{"imageId":"a","width":"wide"}'),
      () => sluice('enqueue', 'welcome-mail', '{}'),
      () => sluice('drain', '--queues', 'emials'),
      () => sluice('drain', '--budget', 'soon'),
      () => sluice('dlq', 'discard'),
      () => sluice('stauts'),
    ])
    expect(syntax.code).toBe(2)
    expect(syntax.stderr).toContain('is not valid JSON')
    expect(zod.code).toBe(2)
    expect(zod.stderr).toContain('email: Invalid email address')
    expect(zod.stderr).toContain(
      'welcome-email takes { userId: string, email: string (email), name?: string }',
    )
    expect(zod.json()).toMatchObject({ error: { code: 'INVALID_INPUT', issues: [{ path: ['email'] }] } })
    expect(nested.code).toBe(2)
    expect(nested.stderr).toMatch(/\n {2}width: .*number/)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('No job named "welcome-mail"')
    expect(unknown.stderr).toContain('Did you mean "welcome-email"?')
    expect(unknown.stderr).toContain('resize-image (queue images)')
    expect(queue.code).toBe(2)
    expect(queue.stderr).toContain('Did you mean "emails"?')
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain('--budget must be a whole number')
    expect(noFilter.code).toBe(2)
    expect(noFilter.stderr).toContain('--all')
    expect(unknownCommand.code).toBe(2)
    expect(unknownCommand.stderr).toContain('Did you mean `sluice status`?')
  })

  test('an unreachable database exits 3 and says where it looked and what to do', async () => {
    const run = await runCli(['--config', exampleConfig, 'queues', '--json'], {
      env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x', SLUICE_SCHEMA: schema },
    })
    expect(run.code).toBe(3)
    expect(run.json()).toMatchObject({ error: { code: 'DATABASE_UNAVAILABLE' } })
    expect(run.stderr).toContain('127.0.0.1:1')
    expect(run.stderr).toContain('unset it to use the embedded database')
  })

  test('--help everywhere, and no command is a usage error', async () => {
    const [top, drain, dev, none] = await fewAtATime([
      () => runCli(['--help']),
      () => runCli(['drain', '--help']),
      () => runCli(['dev', '--help']),
      () => runCli([]),
    ])
    expect(top.code).toBe(0)
    expect(top.stdout).toContain('Exit codes')
    expect(drain.code).toBe(0)
    expect(drain.stdout).toContain('--max-jobs')
    expect(dev.code).toBe(0)
    expect(dev.stdout).toContain('--memory')
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('Usage: sluice <command>')
  })
})

describe('config forms', SPAWNS, () => {
  const chatty = fileURLToPath(new URL('fixtures/chatty.config.mjs', import.meta.url))

  test('a Sluice instance as the default export; handler output stays off stdout under --json', async () => {
    const own = uniqueSchema('cli_instance')
    const run = (...args: string[]) =>
      runCli(['--config', chatty, ...args], { env: { DATABASE_URL: databaseUrl, SLUICE_SCHEMA: own } })
    try {
      expect((await run('migrate', '--json')).json()).toMatchObject({ schema: own, setup: false })
      expect((await run('enqueue', 'chatty', '{"says":"hello"}')).code).toBe(0)
      const drained = await run('drain', '--json')
      expect(drained.code).toBe(0)
      expect(drained.json()).toMatchObject({ completed: 1 })
      expect(drained.stderr).toContain('chatty says hello')
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${own}" CASCADE`)
    }
  })

  test('an instance cannot be handed the embedded database: the error says what to export instead', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sluice-cli-'))
    try {
      const run = await runCli(['--config', chatty, '--data-dir', dir, 'queues'])
      expect(run.code).toBe(1)
      expect(run.stderr).toContain('No database')
      expect(run.stderr).toContain('export default ({ database }) => createSluice({ database')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
