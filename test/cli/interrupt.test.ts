import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest'
import { cliEnv, mainScript, repo, runCli, tsxLoader, Watched } from '../helpers/cli.js'
import { databaseUrl, pgPool, uniqueSchema } from '../helpers/db.js'

// `sluice drain` interrupted or failing must not leave its invocation behind (status would list
// it as a running drain, and a single-consumer queue would stay held) until its lease runs out.
const config = fileURLToPath(new URL('./fixtures/interrupt.config.mjs', import.meta.url))
const schema = uniqueSchema('intr')
const env = { DATABASE_URL: databaseUrl, SLUICE_SCHEMA: schema }
const admin = pgPool(2)
const running: Watched[] = []

const sql = async <R extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<R[]> =>
  (await admin.query<R>(text.replaceAll('$schema', `"${schema}"`), values)).rows
const invocations = () => sql<{ id: string }>('SELECT id FROM $schema.invocations')

function drain(...args: string[]): Watched {
  const child = spawn(
    process.execPath,
    ['--import', tsxLoader, mainScript, '--config', config, 'drain', ...args],
    {
      cwd: repo,
      env: cliEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  const watched = new Watched(child)
  running.push(watched)
  return watched
}

beforeAll(async () => {
  const migrated = await runCli(['--config', config, 'migrate'], { env })
  expect(migrated.code, migrated.stderr).toBe(0)
})
beforeEach(async () => {
  await sql('DELETE FROM $schema.jobs')
  await sql('DELETE FROM $schema.invocations')
})
afterAll(async () => {
  for (const w of running) w.child.kill('SIGKILL')
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

test('Ctrl-C during a drain: the job in progress finishes, the invocation ends, exit 130', async () => {
  await runCli(['--config', config, 'enqueue', 'slow', '{"ms": 1500}'], { env })
  const run = drain('--queues', 'slow')
  await run.waitFor(/slow job started/, 30_000)
  expect(await invocations()).toHaveLength(1)
  run.child.kill('SIGINT')
  await run.waitFor(/stopping/i, 10_000)
  expect(await run.exited).toBe(130)
  expect(await invocations()).toEqual([])
  expect(
    await sql("SELECT 1 FROM $schema.archive WHERE name = 'slow' AND status = 'completed'"),
  ).toHaveLength(1)
})

test('a second Ctrl-C quits at once, and still ends the invocation', async () => {
  await runCli(['--config', config, 'enqueue', 'slow', '{"ms": 19000}'], { env })
  const run = drain('--queues', 'slow')
  await run.waitFor(/slow job started/, 30_000)
  run.child.kill('SIGINT')
  await run.waitFor(/stopping/i, 10_000)
  run.child.kill('SIGINT')
  expect(await run.exited).toBe(130)
  expect(await invocations()).toEqual([])
})

test('a drain that fails ends its invocation before it reports the failure', async () => {
  await runCli(['--config', config, 'enqueue', 'break-settle', '{}'], { env })
  const run = drain('--queues', 'breaking')
  const code = await run.exited
  await sql('ALTER TABLE $schema.archive_away RENAME TO archive_groups')
  expect(code).toBe(3)
  expect(run.output).toMatch(/archive_groups/)
  expect(await invocations()).toEqual([])
})
