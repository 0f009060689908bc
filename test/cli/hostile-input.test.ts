import { afterAll, beforeAll, expect, test } from 'vitest'
import { exampleConfig, fewAtATime, runCli } from '../helpers/cli.js'
import { databaseUrl, pgPool, uniqueSchema } from '../helpers/db.js'

// Input the database cannot store is bad input: exit 2 with the field named, nothing written.
const schema = uniqueSchema('clibad')
const env = { DATABASE_URL: databaseUrl, SLUICE_SCHEMA: schema }
const sluice = (...args: string[]) => runCli(['--config', exampleConfig, ...args], { env })
const admin = pgPool(1)

beforeAll(async () => {
  expect((await sluice('migrate')).code).toBe(0)
})
afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

test('NUL, lone surrogates, deep nesting and a far runAt exit 2 naming the field; nothing written', async () => {
  const deep = `{"userId": ${'['.repeat(5_000)}"u"${']'.repeat(5_000)}, "email": "a@b.co"}`
  const [nul, surrogate, nested, event, runAt] = await fewAtATime([
    () => sluice('enqueue', 'welcome-email', '{"userId": "u\\u0000", "email": "a@b.co"}'),
    () => sluice('enqueue', 'welcome-email', '{"userId": "\\ud800", "email": "a@b.co"}'),
    () => runCli(['--config', exampleConfig, 'enqueue', 'welcome-email', '-'], { env, input: deep }),
    () => sluice('publish', 'orders.created', '{"orderId": "o_1", "note": "\\udc00"}'),
    () =>
      sluice(
        'enqueue',
        'welcome-email',
        '{"userId": "u", "email": "a@b.co"}',
        '--run-at',
        '0001-01-01T00:00:00Z',
      ),
  ])
  for (const [run, named] of [
    [nul, 'input.userId'],
    [surrogate, 'input.userId'],
    [nested, 'input.userId'],
    [event, 'payload.note'],
    [runAt, 'runAt'],
  ] as const) {
    expect(run.code, run.stderr).toBe(2)
    expect(run.stderr).toContain(named)
    expect(run.stderr).not.toMatch(/DATABASE_ERROR|\n\s+at /)
  }
  const { rows } = await admin.query(
    `SELECT (SELECT count(*) FROM "${schema}".jobs) + (SELECT count(*) FROM "${schema}".event_deliveries) AS n`,
  )
  expect(Number(rows[0].n)).toBe(0)
})
