import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { status } from '../../src/cli/commands/status.js'
import { unreachableHint } from '../../src/cli/target.js'
import { exampleConfig, fewAtATime, runCli } from '../helpers/cli.js'
import { databaseUrl, pgPool, uniqueSchema } from '../helpers/db.js'

// What the CLI says when something is wrong: it names the actual cause.
const schema = uniqueSchema('msg')
const env = { DATABASE_URL: databaseUrl, SLUICE_SCHEMA: schema }
const sluice = (...args: string[]) => runCli(['--config', exampleConfig, ...args], { env })
const admin = pgPool(1)

/** The test database's URL with one part changed. */
function urlWith(part: 'pathname' | 'username' | 'port', value: string): string {
  const url = new URL(databaseUrl)
  url[part] = value
  return url.href
}

beforeAll(async () => {
  const migrated = await sluice('migrate')
  expect(migrated.code, migrated.stderr).toBe(0)
})
afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

describe('pause', () => {
  test('a queue no job uses is refused with a suggestion, and nothing is stored', async () => {
    const typo = await sluice('pause', 'emailz')
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain('No job of this app uses queue "emailz"')
    expect(typo.stderr).toContain('Did you mean "emails"?')
    expect(typo.stderr).toContain('--force')
    const { rows } = await admin.query(`SELECT name FROM "${schema}".queues WHERE name = 'emailz'`)
    expect(rows).toEqual([])
  })

  test('--force pauses it anyway; a queue that has jobs in the database is known', async () => {
    const forced = await sluice('pause', 'emailz', '--force', '--json')
    expect(forced.code).toBe(0)
    expect(forced.json()).toEqual({ queue: 'emailz', paused: true })
    await admin.query(
      `INSERT INTO "${schema}".jobs (queue, name, payload, max_attempts) VALUES ('legacy', 'old-job', '{}', 1)`,
    )
    expect((await sluice('pause', 'legacy')).code).toBe(0)
  })
})

describe('database errors', () => {
  test('each says what is wrong: no such database, refused credentials, nothing listening', async () => {
    const run = (url: string) => () =>
      runCli(['--config', exampleConfig, 'status'], { env: { DATABASE_URL: url, SLUICE_SCHEMA: schema } })
    const [missing, role, closed] = await fewAtATime([
      run(urlWith('pathname', '/sluice_no_such_database')),
      run(urlWith('username', 'sluice_no_such_role')),
      run(urlWith('port', '1')),
    ])
    expect(missing.code).toBe(3)
    expect(missing.stderr).toMatch(/is up, but has no database "sluice_no_such_database"/)
    expect(missing.stderr).toContain('CREATE DATABASE')
    expect(missing.stderr).not.toContain('docker run')
    expect(role.code).toBe(3)
    expect(role.stderr).toMatch(/is up, but refused user "sluice_no_such_role"/)
    expect(role.stderr).not.toContain('docker run')
    expect(closed.code).toBe(3)
    expect(closed.stderr).toMatch(/Nothing usable answers at 127\.0\.0\.1:1/)
  })

  test('a URL pg cannot read (an unescaped # in the password, a port out of range) exits 2 naming DATABASE_URL', async () => {
    const run = (url: string) => () =>
      runCli(['--config', exampleConfig, 'status', '--json'], {
        env: { DATABASE_URL: url, SLUICE_SCHEMA: schema },
      })
    const [hash, port] = await fewAtATime([
      run('postgres://postgres:hunt#er2@127.0.0.1:5432/x'),
      run('postgres://postgres@127.0.0.1:99999/x'),
    ])
    for (const refused of [hash, port]) {
      expect(refused.code, refused.stderr).toBe(2)
      expect(refused.json()).toMatchObject({
        error: {
          code: 'INVALID_CONFIG',
          message: expect.stringMatching(/^DATABASE_URL is not a URL .*\(# as %23/),
        },
      })
    }
    expect(hash.stdout + hash.stderr).not.toContain('hunt')
  })

  test('unreachableHint names the user when the URL has one, and reads well when it has none', () => {
    expect(unreachableHint('postgres://ada@db:5432/app', '28000')).toMatch(
      /^The server at db:5432 is up, but refused user "ada": /,
    )
    expect(unreachableHint('postgres://db:5432/app', '28000')).toMatch(
      /^The server at db:5432 is up, but refused the user in DATABASE_URL: /,
    )
  })

  test('a bad SLUICE_SCHEMA blames the variable, not the config file', async () => {
    const bad = await runCli(['--config', exampleConfig, 'status'], {
      env: { DATABASE_URL: databaseUrl, SLUICE_SCHEMA: 'Bad-Schema' },
    })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('SLUICE_SCHEMA')
    expect(bad.stderr).not.toMatch(/config file|Loading .* failed/)
  })
})

describe('status', () => {
  test('a task that is due is "due now", one late is "overdue by", never "… ago"', () => {
    const at = (ms: number) => new Date(Date.parse('2030-01-01T00:00:00Z') + ms).toISOString()
    const task = (name: string, next: number) => ({
      task: name,
      lastStartedAt: at(-60_000),
      nextRunAt: at(next),
      lastRows: 0,
      lastError: null,
    })
    const text = status.render({
      database: 'db',
      schema: 's',
      version: 8,
      latestVersion: 8,
      checkedAt: at(0),
      jobs: [],
      queues: [],
      invocations: [],
      maintenance: [task('reap', -9), task('promote', -120_000), task('prune', 30_000)],
    })
    const line = (name: string) => text.split('\n').find((l) => l.includes(name)) ?? ''
    expect(line('reap')).toContain('due now')
    expect(line('promote')).toContain('overdue by 2 min')
    expect(line('prune')).toContain('in 30 s')
    expect(line('reap')).not.toMatch(/ms ago/)
  })
})
