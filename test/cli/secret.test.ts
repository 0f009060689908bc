import { expect, test } from 'vitest'
import { deployEnvProblems } from '../../src/platforms/secrets.js'
import { fewAtATime, runCli } from '../helpers/cli.js'

const URL = 'postgres://u@h/db'

test('sluice secret generate prints a secret that passes the deploy checks, with no config around', async () => {
  const run = await runCli(['secret', 'generate'], { cwd: '/' })
  expect(run.code, run.stderr).toBe(0)
  const secret = run.stdout.trim()
  expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
  expect(deployEnvProblems({ DATABASE_URL: URL, SLUICE_SECRET: secret }, { require: true })).toEqual([])
})

test('sluice secret check names each problem and exits 2; a good environment passes', async () => {
  const bad = await runCli(['secret', 'check'], {
    env: { DATABASE_URL: 'mysql://x', SLUICE_SECRET: 'short' },
  })
  expect(bad.code).toBe(2)
  expect(bad.stderr).toContain('SLUICE_SECRET must be at least 16 characters')
  expect(bad.stderr).toContain('DATABASE_URL must be a postgres://')
  expect(bad.stderr).toContain('npx sluice secret generate')
  expect(bad.stderr).not.toContain('short\n')
  const missing = await runCli(['secret', 'check'], { env: {} })
  expect(missing.code).toBe(2)
  expect(missing.stderr).toContain('DATABASE_URL is not set')
  const good = await runCli(['secret', 'check'], {
    env: { DATABASE_URL: URL, SLUICE_SECRET: 'a'.repeat(32) },
  })
  expect(good.code, good.stderr).toBe(0)
  expect(good.stdout).toBe('DATABASE_URL and SLUICE_SECRET are fine.\n')
  const withCron = await runCli(['secret', 'check'], {
    env: { DATABASE_URL: URL, SLUICE_SECRET: 'a'.repeat(32), CRON_SECRET: 'c'.repeat(32) },
  })
  expect(withCron.stdout).toBe('DATABASE_URL, SLUICE_SECRET and CRON_SECRET are fine.\n')
})

test('sluice secret aws-json prints the JSON secret serverless.yml reads, after the checks', async () => {
  const env = { DATABASE_URL: URL, SLUICE_SECRET: 'b'.repeat(32) }
  const run = await runCli(['secret', 'aws-json'], { env })
  expect(run.code, run.stderr).toBe(0)
  expect(run.json()).toEqual(env)
  const refused = await runCli(['secret', 'aws-json'], { env: { DATABASE_URL: URL, SLUICE_SECRET: 'short' } })
  expect(refused.code).toBe(2)
  expect(refused.stdout).toBe('')
  // Unset: refused, with the command that makes one.
  const unset = await runCli(['secret', 'aws-json'], { env: { DATABASE_URL: URL } })
  expect(unset.code).toBe(2)
  expect(unset.stdout).toBe('')
  expect(unset.stderr).toContain('SLUICE_SECRET=$(npx sluice secret generate)')
})

test('sluice secret without a known subcommand is a usage error', async () => {
  expect((await runCli(['secret'])).code).toBe(2)
  const unknown = await runCli(['secret', 'rotate'])
  expect(unknown.code).toBe(2)
  expect(unknown.stderr).toContain('generate | check | aws-json')
  expect((await runCli(['--help'])).stdout).toContain('secret')
})

test('the secret subcommands take --json and --help like every command', async () => {
  const good = { DATABASE_URL: URL, SLUICE_SECRET: 'a'.repeat(32) }
  const [generated, passed, refused, aws, help, helpFirst, unknownJson] = await fewAtATime([
    () => runCli(['secret', 'generate', '--json']),
    () => runCli(['secret', 'check', '--json'], { env: good }),
    () =>
      runCli(['secret', 'check', '--json'], { env: { DATABASE_URL: 'mysql://x', SLUICE_SECRET: 'short' } }),
    () => runCli(['secret', 'aws-json', '--json'], { env: good }),
    () => runCli(['secret', 'generate', '--help']),
    () => runCli(['--json', 'secret', '--help']),
    () => runCli(['secret', 'rotate', '--json']),
  ])
  expect(generated.code, generated.stderr).toBe(0)
  const { secret } = generated.json<{ secret: string }>()
  expect(deployEnvProblems({ DATABASE_URL: URL, SLUICE_SECRET: secret }, { require: true })).toEqual([])

  expect(passed.code, passed.stderr).toBe(0)
  expect(passed.json()).toEqual({ passed: true, problems: [] })
  expect(refused.code).toBe(2)
  const findings = refused.json<{ passed: boolean; problems: string[] }>()
  expect(findings.passed).toBe(false)
  expect(findings.problems).toContain('DATABASE_URL must be a postgres:// or postgresql:// URL.')
  // Problems only: the advice that follows a secret's goes to stderr as a hint.
  expect(findings.problems).toHaveLength(2)
  expect(findings.problems.some((p) => p.includes('secret generate'))).toBe(false)
  expect(refused.stderr).toContain('hint: Generate a good secret with `npx sluice secret generate`.')

  expect(aws.code, aws.stderr).toBe(0)
  expect(aws.json()).toEqual(good)

  for (const run of [help, helpFirst]) {
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('aws-json')
    expect(run.stdout).toContain('--json')
  }
  expect(unknownJson.code).toBe(2)
  expect(unknownJson.json()).toMatchObject({ error: { code: 'USAGE' } })
})

test('a DATABASE_URL that no URL parser reads (a port above 65535, a space in the host) is a problem', () => {
  const secret = 'c'.repeat(32)
  for (const url of ['postgres://u:pw@h:99999/db', 'postgres://u@my host/db']) {
    expect(deployEnvProblems({ DATABASE_URL: url, SLUICE_SECRET: secret })).toEqual([
      'DATABASE_URL is not a URL the PostgreSQL driver can read: check the port, and percent-encode special ' +
        'characters in the user name and password (# as %23, @ as %40, / as %2F, ? as %3F, a space as %20).',
    ])
  }
  // An unescaped "@" in the password reads as the drivers read it: the last "@" ends the user info.
  expect(deployEnvProblems({ DATABASE_URL: 'postgres://user:p@ss@host/db', SLUICE_SECRET: secret })).toEqual(
    [],
  )
})
