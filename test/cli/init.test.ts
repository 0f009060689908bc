/**
 * `sluice init` in a project of each kind: the files it writes, where their imports point, that
 * it keeps what exists without --force, and the commands it prints. Building what it wrote, and
 * each platform's own tool on it, is the consumer suite's part (test/consumer).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { discoverFunctions } from '../../src/build/functions.js'
import { runCli } from '../helpers/cli.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-init-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const read = (path: string) => readFile(join(dir, path), 'utf8')
const project = async (files: Record<string, string>) => {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true })
    await writeFile(join(dir, path), content)
  }
}

describe('sluice init', () => {
  test('aws in a TypeScript project without an app: entries, serverless.yml, a config skeleton, next commands', async () => {
    await project({ 'package.json': '{"name":"@acme/shop","type":"module"}', 'tsconfig.json': '{}' })
    const run = await runCli(['init', 'aws'], { cwd: dir })
    expect(run.code, run.stderr).toBe(0)
    for (const file of ['functions/aws/drain.ts', 'functions/aws/maintain.ts', 'functions/aws/api.ts'])
      expect(run.stdout).toContain(`wrote ${file}`)
    expect(run.stdout).toContain('wrote sluice.config.ts')
    expect(run.stdout).toContain('wrote serverless.yml')
    expect(await read('functions/aws/drain.ts')).toContain("import { sluice } from '../../sluice.config.js'")
    expect(await read('serverless.yml')).toMatch(/^service: shop$/m)
    expect(await read('sluice.config.ts')).toContain('export const sluice = createSluice({ jobs })')
    const next = run.stdout.slice(run.stdout.indexOf('Next:')).trim().split('\n').slice(1)
    expect(next).toHaveLength(3)
    // The secret's command sets what aws-json needs, under the name serverless.yml reads.
    expect(next[0]).toMatch(
      /^\s*SLUICE_SECRET=\$\(npx sluice secret generate\) DATABASE_URL=\S+ npx sluice secret aws-json \|/,
    )
    expect(next[0]).toContain('--name shop/dev')
    expect(await read('serverless.yml')).toContain('secretId: shop/${sls:stage}')
    expect(next[2]).toContain('npx sluice build && npx osls deploy')
    // What `sluice build` will bundle, and for which runtime.
    expect(await discoverFunctions(dir)).toEqual([
      { entry: 'functions/aws/api.ts', out: 'aws/api.mjs', target: 'node' },
      {
        entry: 'functions/aws/drain.ts',
        out: 'aws/drain.mjs',
        target: 'node',
        migrations: false,
        schedules: false,
      },
      { entry: 'functions/aws/maintain.ts', out: 'aws/maintain.mjs', target: 'node', migrations: false },
    ])
  })

  test("finds the module that exports the app's sluice, and imports it from there", async () => {
    await project({
      'package.json': '{"name":"shop"}',
      'tsconfig.json': '{}',
      'src/lib/sluice.ts': 'export const sluice = createSluice({ jobs })\n',
    })
    const run = await runCli(['init', 'vercel'], { cwd: dir })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).not.toContain('sluice.config')
    expect(await read('functions/vercel/sluice.ts')).toContain("from '../../src/lib/sluice.js'")
    expect(JSON.parse(await read('vercel.json'))).toMatchObject({
      framework: null,
      buildCommand: 'sluice build --vercel',
      crons: [{ path: '/api/maintain', schedule: '* * * * *' }],
    })
    expect(await read('functions/vercel/drain.ts')).toContain("from '../../src/lib/sluice.js'")
    // The drain and maintenance as lean functions of their own, at the paths the API serves them.
    expect(await discoverFunctions(dir)).toEqual([
      {
        entry: 'functions/vercel/drain.ts',
        out: 'vercel/drain.mjs',
        target: 'node',
        vercel: { path: 'api/drain', maxDurationS: 60 },
        migrations: false,
        schedules: false,
      },
      {
        entry: 'functions/vercel/maintain.ts',
        out: 'vercel/maintain.mjs',
        target: 'node',
        vercel: { path: 'api/maintain', maxDurationS: 60 },
        migrations: false,
      },
      {
        entry: 'functions/vercel/sluice.ts',
        out: 'vercel/sluice.mjs',
        target: 'node',
        vercel: { path: 'api/sluice', maxDurationS: 60 },
      },
    ])
  })

  test('--app names the module; one that does not export sluice is refused', async () => {
    await project({
      'package.json': '{"name":"shop"}',
      'server/queue.mjs': 'export { sluice } from "./x.mjs"\n',
      'server/other.mjs': 'export const app = 1\n',
    })
    const refused = await runCli(['init', 'aws', '--app', 'server/other.mjs'], { cwd: dir })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('server/other.mjs does not export `sluice`')
    const run = await runCli(['init', 'aws', '--app', 'server/queue.mjs'], { cwd: dir })
    expect(run.code, run.stderr).toBe(0)
    // A JavaScript project (no tsconfig.json), CommonJS package: .mjs entries.
    expect(await read('functions/aws/drain.mjs')).toContain("from '../../server/queue.mjs'")
  })

  test('next: the App Router route under src/app, importing without an extension', async () => {
    await project({
      'package.json': '{"name":"web"}',
      'tsconfig.json': '{}',
      'src/app/page.tsx': 'export default function Page() { return null }\n',
      'src/sluice.ts': 'export const sluice = createSluice({ jobs: [] })\n',
    })
    const run = await runCli(['init', 'next'], { cwd: dir })
    expect(run.code, run.stderr).toBe(0)
    const route = await read('src/app/api/sluice/[...route]/route.ts')
    expect(route).toContain("import { sluice } from '../../../../sluice'")
    expect(route).toContain("basePath: '/api/sluice'")
    expect(route).toContain('export const maxDuration = 60')
    // The drain and maintenance as routes of their own, which Next.js prefers to the catch-all.
    const drain = await read('src/app/api/sluice/drain/route.ts')
    expect(drain).toContain("import { sluice } from '../../../../sluice'")
    expect(drain).toContain('vercelDrain(sluice')
    expect(await read('src/app/api/sluice/maintain/route.ts')).toContain('vercelMaintain(sluice)')
    expect(JSON.parse(await read('vercel.json'))).toEqual({
      $schema: 'https://openapi.vercel.sh/vercel.json',
      crons: [{ path: '/api/sluice/maintain', schedule: '* * * * *' }],
    })
    expect(run.stdout).toContain('The routes import `sluice` from src/sluice.ts.')
    // A project without Next.js installed is told to install it with the driver.
    expect(run.stdout).toContain('npm install pg next')
  })

  test('cloudflare: a worker on job contracts only, an edge function, and wrangler.toml', async () => {
    await project({ 'package.json': '{"name":"shop","type":"module"}', 'tsconfig.json': '{}' })
    const run = await runCli(['init', 'cloudflare'], { cwd: dir })
    expect(run.code, run.stderr).toBe(0)
    expect(await read('functions/cloudflare/worker.ts')).toContain("from '../../sluice.contracts.js'")
    expect(await read('sluice.contracts.ts')).toContain("from 'sluice/edge'")
    expect(await read('wrangler.toml')).toContain('main = "dist/functions/cloudflare/worker.js"')
    expect(run.stdout).toContain(
      'The Worker imports only your job contracts, from sluice.contracts.ts; the CLI loads `sluice` from sluice.config.ts.',
    )
    // Before the next commands: the driver and the bundler, which this project lacks.
    const install = run.stdout.slice(run.stdout.indexOf('First install'), run.stdout.indexOf('Next:'))
    expect(install).toContain('npm install @neondatabase/serverless')
    // tsx too: `sluice migrate` loads the TypeScript app module through it.
    expect(install).toContain('npm install --save-dev esbuild tsx')
    expect(await discoverFunctions(dir)).toEqual([
      { entry: 'functions/cloudflare/worker.ts', out: 'cloudflare/worker.js', target: 'edge' },
    ])
  })

  test('names only the packages the functions need and the project lacks', async () => {
    await project({
      'package.json': '{"name":"shop","type":"module"}',
      'src/sluice.js': 'export const sluice = createSluice({ jobs })\n',
      'node_modules/pg/package.json': '{"name":"pg"}',
    })
    const run = await runCli(['init', 'aws'], { cwd: dir })
    expect(run.code, run.stderr).toBe(0)
    const install = run.stdout.slice(run.stdout.indexOf('First install'), run.stdout.indexOf('Next:'))
    expect(install.trim().split('\n').slice(1)).toEqual(['  npm install --save-dev esbuild osls'])
    await project({
      'node_modules/esbuild/package.json': '{"name":"esbuild"}',
      'node_modules/osls/package.json': '{"name":"osls"}',
    })
    const again = await runCli(['init', 'aws'], { cwd: dir })
    expect(again.stdout).not.toContain('First install')
  })

  test('never overwrites without --force', async () => {
    await project({ 'package.json': '{"name":"shop"}', 'tsconfig.json': '{}', 'serverless.yml': 'mine\n' })
    const run = await runCli(['init', 'aws'], { cwd: dir })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/kept {2}serverless\.yml/)
    expect(await read('serverless.yml')).toBe('mine\n')
    await writeFile(join(dir, 'functions/aws/drain.ts'), '// edited\n')
    const again = await runCli(['init', 'aws'], { cwd: dir })
    expect(await read('functions/aws/drain.ts')).toBe('// edited\n')
    expect(again.stdout).not.toContain('wrote')
    const forced = await runCli(['init', 'aws', '--force'], { cwd: dir })
    expect(forced.code).toBe(0)
    expect(await read('serverless.yml')).toContain('service: shop')
    expect(await read('functions/aws/drain.ts')).toContain('drainHandler(sluice)')
  })

  test('--json prints one JSON document: the files written and kept, what to install, the next commands', async () => {
    await project({ 'package.json': '{"name":"shop","type":"module"}', 'serverless.yml': 'mine\n' })
    const run = await runCli(['init', 'aws', '--json'], { cwd: dir })
    expect(run.code, run.stderr).toBe(0)
    const answer = run.json() as { platform: string; written: string[]; kept: string[]; next: string[] }
    expect(answer).toMatchObject({ platform: 'aws', kept: ['serverless.yml'] })
    expect(answer.written).toContain('functions/aws/drain.js')
    expect(answer.next).toHaveLength(3)
  })

  test('vercel and next: the next commands name SLUICE_DRAIN_URL, without which no drain is ever woken', async () => {
    await project({ 'package.json': '{"name":"shop","type":"module"}' })
    for (const [platform, path] of [
      ['vercel', '/api/drain'],
      ['next', '/api/sluice/drain'],
    ] as const) {
      const run = await runCli(['init', platform, '--json'], { cwd: dir })
      expect(run.code, run.stderr).toBe(0)
      expect((run.json() as { next: string[] }).next.join('\n')).toContain(
        `SLUICE_DRAIN_URL (https://<your-domain>${path})`,
      )
    }
  })

  test('an unknown platform is a usage error naming the choices', async () => {
    const run = await runCli(['init', 'heroku'], { cwd: dir })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('Unknown platform "heroku"')
    expect(run.stderr).toContain('aws | vercel | next | cloudflare')
  })
})
