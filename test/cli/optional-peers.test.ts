import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { cliEnv, exampleConfig, hidePackages, repo, runCli, tsxLoader } from '../helpers/cli.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-peers-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

test('sluice dev without DATABASE_URL and without PGlite exits 3 and says what to install', async () => {
  const run = await runCli(['--config', exampleConfig, '--data-dir', dir, 'dev', '--port', '0'], {
    hide: ['@electric-sql/pglite'],
  })
  expect(run.code, run.stderr).toBe(3)
  expect(run.stderr).toContain('@electric-sql/pglite')
  expect(run.stderr).toContain('npm install -D @electric-sql/pglite')
  expect(run.stderr).toContain('DATABASE_URL')
  expect(run.stderr).not.toContain('ERR_MODULE_NOT_FOUND')
})

test('sluice dev without @hono/node-server exits 2 and says what to install, before it opens a database', async () => {
  const data = join(dir, 'no-server')
  const run = await runCli(['--config', exampleConfig, '--data-dir', data, 'dev', '--port', '0'], {
    hide: ['@hono/node-server'],
  })
  expect(run.code, run.stderr).toBe(2)
  expect(run.stderr).toContain('sluice dev needs the package @hono/node-server')
  expect(run.stderr).toContain('npm install -D @hono/node-server')
  expect(run.stderr).not.toContain('Cannot serve')
  expect(run.stderr).not.toContain('Starting:')
  expect(existsSync(data)).toBe(false)
})

test('DATABASE_URL=pglite:… without PGlite exits 3 with the same hint as without DATABASE_URL', async () => {
  const run = await runCli(['--config', exampleConfig, 'status'], {
    hide: ['@electric-sql/pglite'],
    env: { DATABASE_URL: 'pglite:memory' },
  })
  expect(run.code, run.stderr).toBe(3)
  expect(run.stderr).toContain('hint: Install it (`npm install -D @electric-sql/pglite`)')
})

test('sluice build without esbuild exits 2 and says what to install', async () => {
  const project = join(dir, 'no-esbuild')
  await mkdir(join(project, 'functions/aws'), { recursive: true })
  await writeFile(join(project, 'functions/aws/drain.mjs'), 'export const handler = () => 1\n')
  const run = await runCli(['build'], { hide: ['esbuild'], cwd: project })
  expect(run.code, run.stderr).toBe(2)
  expect(run.stderr).toContain('`sluice build` needs esbuild, which is not installed.')
  expect(run.stderr).toContain('hint: Install it: `npm install --save-dev esbuild`.')
})

test('sluice build where there is no function, or of an entry that is not one, exits 2', async () => {
  const empty = await runCli(['build'], { cwd: dir })
  expect(empty.code, empty.stderr).toBe(2)
  expect(empty.stderr).toContain('run `sluice init <aws | vercel | cloudflare>` to write them')
  const run = await runCli(['build', 'functions/aws/nope.ts'], { cwd: repo })
  expect(run.code, run.stderr).toBe(2)
  expect(run.stderr).toContain('Not a function entry: functions/aws/nope.ts. Entries: functions/aws/api.ts')
})

/** Runs `code` (an ES module importing the library from src/) with `hide` uninstalled; its stdout. */
function runScript(code: string, hide: string[], env: Record<string, string> = {}): string {
  const run = spawnSync(
    process.execPath,
    ['--import', hidePackages, '--import', tsxLoader, '--input-type=module', '-e', code],
    { cwd: repo, env: cliEnv({ ...env, SLUICE_HIDE_PACKAGES: hide.join(',') }), encoding: 'utf8' },
  )
  expect(run.status, run.stderr).toBe(0)
  return run.stdout.trim()
}

const tryMigrate = (options: string) => `
  import { createSluice } from './src/index.ts'
  const sluice = createSluice(${options})
  try { await sluice.migrate(); console.log('migrated') }
  catch (error) { console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message })) }
`

test('a missing pg is a ConfigError naming the package and the option that asked for it', () => {
  const fromOption = JSON.parse(runScript(tryMigrate("{ database: 'postgres://127.0.0.1:1/x' }"), ['pg']))
  expect(fromOption).toEqual({
    name: 'ConfigError',
    code: 'INVALID_CONFIG',
    message:
      'database: "postgres://…" needs the package pg, which is not installed: install it with `npm install pg`.',
  })
  const fromEnv = JSON.parse(
    runScript(tryMigrate('{}'), ['pg'], { DATABASE_URL: 'postgres://127.0.0.1:1/x' }),
  ) as { message: string }
  expect(fromEnv.message).toMatch(/^DATABASE_URL: "postgres:\/\/…" needs the package pg/)
})

test('a missing PGlite is a ConfigError naming it', () => {
  const result = JSON.parse(runScript(tryMigrate("{ database: 'pglite:memory' }"), ['@electric-sql/pglite']))
  expect(result).toMatchObject({ name: 'ConfigError', code: 'INVALID_CONFIG' })
  expect(result.message).toContain('npm install @electric-sql/pglite')
})

test('the library imports no optional peer when it loads, nor on creating a Sluice', () => {
  const out = runScript(
    `
    import { createSluice, createApp } from './src/index.ts'
    import { vercelHandlers } from './src/platforms/vercel.ts'
    import { drainHandler } from './src/platforms/aws-lambda.ts'
    const sluice = createSluice({})
    createApp(sluice)
    vercelHandlers(sluice)
    drainHandler(sluice)
    console.log('loaded')
    `,
    [
      'pg',
      '@electric-sql/pglite',
      '@neondatabase/serverless',
      '@opentelemetry/api',
      'ws',
      '@hono/node-server',
    ],
  )
  expect(out).toBe('loaded')
})
