import { fileURLToPath } from 'node:url'
import { afterAll, expect, test } from 'vitest'
import { runCli } from '../helpers/cli.js'
import { databaseUrl, pgPool, uniqueSchema } from '../helpers/db.js'

const config = fileURLToPath(new URL('fixtures/events.config.mjs', import.meta.url))
const schema = uniqueSchema('cli_events')
const admin = pgPool(1)
const sluice = (...args: string[]) =>
  runCli(['--config', config, ...args], { env: { DATABASE_URL: databaseUrl, SLUICE_SCHEMA: schema } })

afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

test('sluice publish: one job per matching subscriber, the event id dedupes, bad input exits 2', async () => {
  expect((await sluice('migrate', '--json')).code).toBe(0)
  const first = await sluice(
    'publish',
    'greetings.hello',
    '{"says":"hi"}',
    '--event-id',
    'g-1',
    '--header',
    'from=ada',
    '--json',
  )
  expect(first.code).toBe(0)
  expect(first.json()).toEqual({ topic: 'greetings.hello', eventId: 'g-1', jobs: 1 })
  const again = await sluice('publish', 'greetings.hello', '{"says":"hi"}', '--event-id', 'g-1')
  expect(again.code).toBe(0)
  expect(again.stdout).toContain('no job written')

  const bad = await Promise.all([
    sluice('publish', 'greetings.*', '{}'),
    sluice('publish', 'greetings.hello', '{says'),
    sluice('publish', 'greetings.hello', '{"says":1}', '--json'),
    sluice('publish', 'greetings.hello', '{"says":"x"}', '--header', 'nope'),
    sluice('publish', 'greetings.hello'),
  ])
  expect(bad.map((r) => r.code)).toEqual([2, 2, 2, 2, 2])
  expect(bad[0]!.stderr).toContain('no wildcards')
  expect(bad[2]!.json()).toMatchObject({ error: { code: 'INVALID_INPUT' } })

  const drained = await sluice('drain', '--json')
  expect(drained.json()).toMatchObject({ completed: 1 })
  expect(drained.stderr).toContain('shout greetings.hello hi from ada')
})
