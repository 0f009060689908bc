import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  BuildError,
  build,
  DOCS_TABLE,
  FUNCTIONS,
  isNodeBuiltin,
  sizeTable,
  withSizeTable,
} from '../../scripts/build.js'
import { buildFunctions } from '../../src/build/build.js'
import { buildToTemp, root, setEnv, type TempBuild } from '../helpers/build.js'
import { runCli } from '../helpers/cli.js'
import { parseYaml } from '../helpers/yaml.js'

interface PackageJson {
  exports: Record<string, string | { types: string; import: string }>
  bin?: Record<string, string>
}

let built: TempBuild
const log: string[] = []

// The library's declarations (tsc) and eight bundles: about 40 s alone, several minutes on a two-core
// machine running other test files' databases beside it.
beforeAll(async () => {
  built = await buildToTemp({ library: true, vercel: true, log: (line) => log.push(line) })
}, 600_000)
afterAll(() => built?.remove())

/** `./dist/x.js` in package.json → the same file in the temporary build. */
const inBuild = (target: string): string => join(built.outDir, target.replace(/^\.\/dist\//, ''))

describe('the library', () => {
  test('every package.json export has its JS and its types', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as PackageJson
    const subpaths = Object.keys(pkg.exports).filter((key) => key !== './package.json')
    expect(subpaths).toEqual(['.', './edge', './aws-lambda', './vercel', './build'])
    for (const key of subpaths) {
      const target = pkg.exports[key] as { types: string; import: string }
      expect(existsSync(inBuild(target.import)), target.import).toBe(true)
      expect(existsSync(inBuild(target.types)), target.types).toBe(true)
    }
    for (const bin of Object.values(pkg.bin ?? {})) expect(existsSync(inBuild(bin)), bin).toBe(true)
    expect(pkg.bin === undefined).toBe(!existsSync(join(root, 'src/cli/main.ts')))
  })

  test('the built entries load and expose the public API', async () => {
    const main = await built.load<Record<string, unknown>>('index.js')
    expect(typeof main.createSluice).toBe('function')
    expect(typeof main.defineContract).toBe('function')
    const edge = await built.load<Record<string, unknown>>('edge.js')
    expect(Object.keys(edge).sort()).toEqual(
      expect.arrayContaining(['createEdgeClient', 'createEnqueueApp', 'defineContract', 'fromNeonHttp']),
    )
    expect(edge).not.toHaveProperty('createSluice')
    const lambda = await built.load<Record<string, unknown>>('platforms/aws-lambda.js')
    expect(Object.keys(lambda).sort()).toEqual([
      'DEFAULT_WAKE_WAIT_MS',
      'apiHandler',
      'drainHandler',
      'lambdaRemainingMs',
      'maintainHandler',
    ])
    const vercel = await built.load<Record<string, unknown>>('platforms/vercel.js')
    expect(typeof vercel.vercelHandlers).toBe('function')
  })
})

describe('the CLI as installed', () => {
  test('loads a TypeScript app module in a package without "type": "module" (a new Next.js project)', async () => {
    const project = await mkdtemp(join(tmpdir(), 'sluice-cjs-'))
    try {
      await writeFile(join(project, 'package.json'), '{"name":"cjs-app","private":true}')
      await mkdir(join(project, 'lib'))
      await writeFile(
        join(project, 'lib/sluice.ts'),
        [
          "import * as z from 'zod'",
          "import { createSluice, defineJob } from 'sluice'",
          "import { queueName } from './names'",
          "export const ping = defineJob({ name: 'ping', queue: queueName, input: z.object({}), run: async () => {} })",
          'export const sluice = createSluice({ jobs: [ping] })',
          '',
        ].join('\n'),
      )
      await writeFile(join(project, 'lib/names.ts'), "export const queueName: string = 'pings'\n")
      // The package as npm installs it (its dist/ is this build), beside the project's zod and tsx.
      const modules = join(project, 'node_modules')
      await mkdir(join(modules, 'sluice'), { recursive: true })
      await copyFile(join(root, 'package.json'), join(modules, 'sluice/package.json'))
      await symlink(built.outDir, join(modules, 'sluice/dist'), 'dir')
      for (const name of ['zod', 'tsx'])
        await symlink(join(root, 'node_modules', name), join(modules, name), 'dir')
      const run = spawnSync(process.execPath, [inBuild('./dist/cli/main.js'), 'queues', '--json'], {
        cwd: project,
        encoding: 'utf8',
        // Nothing listens on port 1: the app loads, then the database is unreachable (exit 3).
        env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', NO_COLOR: '1' },
      })
      expect(run.stderr).not.toContain('Loading lib/sluice.ts failed')
      expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: 'DATABASE_UNAVAILABLE' } })
      expect(run.status).toBe(3)
    } finally {
      await rm(project, { recursive: true, force: true })
    }
  })
})

describe('the function bundles', () => {
  test('one self-contained file per function, with a size table', () => {
    expect(built.bundles.map((b) => b.entry).sort()).toEqual(FUNCTIONS.map((fn) => fn.entry).sort())
    for (const bundle of built.bundles) expect(bundle.gzipBytes).toBeLessThan(bundle.bytes)
    const table = log.find((line) => line.includes('gzip'))
    expect(table).toBeDefined()
    for (const bundle of built.bundles) expect(table).toContain(bundle.file)
    expect(sizeTable(built.bundles).split('\n')).toHaveLength(built.bundles.length + 2)
  })

  test("docs/deploy.md's size table is the build's (npm run build -- --functions --docs rewrites it)", async () => {
    const doc = await readFile(join(root, DOCS_TABLE.file), 'utf8')
    expect(doc, 'stale: run `npm run build -- --functions --docs`').toBe(
      withSizeTable(doc, sizeTable(built.bundles)),
    )
  })

  test('the edge bundle stays small and free of Node', async () => {
    const edge = built.bundles.find((b) => b.target === 'edge')!
    expect(edge.gzipBytes).toBeLessThan(120 * 1024)
    const code = await readFile(join(built.outDir, edge.file), 'utf8')
    expect(code).not.toMatch(/from\s*["']node:|require\(["'](node:)?(fs|net|tls|crypto|events)["']\)/)
    // Contracts only: the welcome-email handler (which returns `sentTo`) is not in it.
    expect(code).toContain('welcome-email')
    expect(code).not.toContain('sentTo')
  })

  test('an edge function importing a Node built-in fails the build, naming the import', async () => {
    for (const [fixture, builtin] of [
      ['test/fixtures/edge-imports-fs.ts', 'node:fs'],
      ['test/fixtures/edge-imports-pg.ts', 'net'],
    ] as const) {
      const failure = await build({
        outDir: join(built.outDir, 'bad'),
        library: false,
        log: () => {},
        functionList: [{ entry: fixture, out: 'bad.js', target: 'edge' }],
      }).catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(BuildError)
      expect((failure as Error).message).toMatch(/imports Node built-ins/)
      expect((failure as Error).message).toContain(builtin)
    }
  })

  test('a package that is not installed fails the build with the command that installs it', async () => {
    const failure = await build({
      outDir: join(built.outDir, 'bad'),
      library: false,
      log: () => {},
      functionList: [{ entry: 'test/fixtures/imports-missing-package.mjs', out: 'bad.mjs', target: 'node' }],
    }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(BuildError)
    expect((failure as Error).message).toContain('Could not resolve "@acme/not-installed/sub"')
    expect((failure as Error).message).toContain('npm install @acme/not-installed')
  })

  test('a project without pg is told that its Node functions carry no driver', async () => {
    // Outside the repository: nothing resolves pg from here.
    const project = await mkdtemp(join(tmpdir(), 'sluice-no-pg-'))
    try {
      await mkdir(join(project, 'functions/aws'), { recursive: true })
      await writeFile(join(project, 'functions/aws/drain.mjs'), 'export const handler = () => 1\n')
      const lines: string[] = []
      await buildFunctions({ root: project, log: (line) => lines.push(line) })
      expect(lines.join('\n')).toContain('pg is not installed')
      expect(lines.join('\n')).toContain('`npm install pg`')
    } finally {
      await rm(project, { recursive: true, force: true })
    }
  })

  test('sluice build --json prints one JSON document of the bundles; the size table goes to stderr', async () => {
    const project = await mkdtemp(join(tmpdir(), 'sluice-build-json-'))
    try {
      await mkdir(join(project, 'functions/aws'), { recursive: true })
      await writeFile(join(project, 'functions/aws/drain.mjs'), 'export const handler = () => 1\n')
      const run = await runCli(['build', '--json'], { cwd: project })
      expect(run.code, run.stderr).toBe(0)
      expect(run.json()).toEqual({
        bundles: [
          {
            entry: 'functions/aws/drain.mjs',
            file: 'dist/functions/aws/drain.mjs',
            target: 'node',
            bytes: expect.any(Number),
            gzipBytes: expect.any(Number),
          },
        ],
      })
      expect(run.stderr).toContain('functions/aws/drain.mjs')
    } finally {
      await rm(project, { recursive: true, force: true })
    }
  })

  test('a function that would read files at run time fails the build, and leaves no bundle to deploy', async () => {
    const outDir = join(built.outDir, 'bad-reads')
    const failure = await build({
      outDir,
      library: false,
      log: () => {},
      functionList: [
        { entry: 'test/fixtures/reads-schedules.ts', out: 'fine.mjs', target: 'node' },
        { entry: 'test/fixtures/node-reads-files.ts', out: 'bad.mjs', target: 'node' },
        { entry: 'test/fixtures/node-reads-files.ts', out: 'also-bad.mjs', target: 'node' },
      ],
    }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(BuildError)
    expect((failure as Error).message).toMatch(
      /read files at run time[\s\S]*node-reads-files\.ts → node:fs\/promises/,
    )
    // Both failing entries are named, whichever finished first.
    expect((failure as Error).message.match(/would read files at run time/g)).toHaveLength(2)
    // The bundle that built is not left beside them for a deploy to pick up.
    expect(existsSync(join(outDir, 'functions'))).toBe(false)
  })

  test('isNodeBuiltin knows bare and prefixed names', () => {
    for (const name of ['fs', 'node:fs', 'fs/promises', 'node:test', 'stream/web'])
      expect(isNodeBuiltin(name)).toBe(true)
    for (const name of ['zod', 'hono/aws-lambda', '@neondatabase/serverless'])
      expect(isNodeBuiltin(name)).toBe(false)
  })
})

describe('deployment files point at built handlers', () => {
  test('serverless.yml: every handler exists in the build and exports its handler', async () => {
    const yml = parseYaml(await readFile(join(root, 'serverless.yml'), 'utf8')) as {
      provider: { runtime: string; environment: Record<string, string> }
      package: { individually: boolean }
      functions: Record<
        string,
        {
          handler: string
          events?: Record<string, unknown>[]
          url?: boolean
          package: { patterns: string[] }
        }
      >
    }
    expect(yml.package.individually).toBe(true)
    expect(yml.provider.runtime).toBe('nodejs24.x')
    expect(Object.keys(yml.provider.environment)).toEqual(
      expect.arrayContaining(['DATABASE_URL', 'SLUICE_SECRET']),
    )
    expect(Object.keys(yml.functions).sort()).toEqual(['api', 'drain', 'maintain'])
    const restore = setEnv({
      DATABASE_URL: 'postgres://u:p@127.0.0.1:1/none',
      SLUICE_SECRET: 'a-secret-of-sixteen-chars',
    })
    try {
      for (const [name, fn] of Object.entries(yml.functions)) {
        const [file, exported] = [
          fn.handler.slice(0, fn.handler.lastIndexOf('.')),
          fn.handler.split('.').pop()!,
        ]
        expect(file.startsWith('dist/functions/'), fn.handler).toBe(true)
        const bundle = `${file.replace(/^dist\//, '')}.mjs`
        expect(existsSync(join(built.outDir, bundle)), `${name}: ${bundle}`).toBe(true)
        // Packaged alone: the artifact holds this bundle and nothing else.
        expect(fn.package.patterns).toEqual(['!**', `${file}.mjs`, `${file}.mjs.map`])
        const mod = await built.load<Record<string, unknown>>(bundle)
        expect(typeof mod[exported], `${name} exports ${exported}`).toBe('function')
      }
    } finally {
      restore()
    }
    expect(yml.functions.drain!.url).toBe(true)
    expect(yml.functions.maintain!.events).toEqual([{ schedule: 'rate(1 minute)' }])
    expect(yml.functions.api!.events).toEqual([{ httpApi: '*' }])
  })

  test('vercel.json: the cron path routes to a built function, each with its config', async () => {
    const vercelJson = JSON.parse(await readFile(join(root, 'vercel.json'), 'utf8')) as {
      buildCommand: string
      crons: { path: string; schedule: string }[]
    }
    expect(vercelJson.crons).toEqual([{ path: '/api/maintain', schedule: '* * * * *' }])
    expect(vercelJson.buildCommand).toContain('--vercel')
    const output = join(built.outDir, 'vercel-output')
    const config = JSON.parse(await readFile(join(output, 'config.json'), 'utf8')) as {
      version: number
      routes: { src?: string; dest?: string; handle?: string }[]
      crons: unknown
    }
    expect(config.version).toBe(3)
    // vercel.json's crons only: `vercel build` adds them to the output's own.
    expect(config.crons).toBeUndefined()
    const functionFor = (path: string): string | undefined => {
      const dir = (p: string) => join(output, 'functions', `${p.replace(/^\//, '')}.func`)
      if (existsSync(dir(path))) return dir(path)
      const route = config.routes.find((r) => r.src && new RegExp(r.src).test(path))
      return route?.dest && existsSync(dir(route.dest)) ? dir(route.dest) : undefined
    }
    for (const path of [
      ...vercelJson.crons.map((c) => c.path),
      '/api/drain',
      '/api/jobs/welcome-email',
      '/api/enqueue/welcome-email',
    ]) {
      const dir = functionFor(path)
      expect(dir, path).toBeDefined()
      const vc = JSON.parse(await readFile(join(dir!, '.vc-config.json'), 'utf8')) as Record<string, unknown>
      expect(existsSync(join(dir!, (vc.handler ?? vc.entrypoint) as string)), path).toBe(true)
    }
    const node = JSON.parse(await readFile(join(functionFor('/api/maintain')!, '.vc-config.json'), 'utf8'))
    expect(node).toMatchObject({ runtime: 'nodejs24.x', launcherType: 'Nodejs', maxDuration: 60 })
    expect(node.environment).toEqual({
      SLUICE_MAX_DURATION_MS: '60000',
      NODE_OPTIONS: '--enable-source-maps',
    })
    const edge = JSON.parse(await readFile(join(functionFor('/api/enqueue/x')!, '.vc-config.json'), 'utf8'))
    expect(edge).toEqual({ runtime: 'edge', entrypoint: 'index.js' })
  })
})

describe('the published types', () => {
  /**
   * dist/ and package.json in a fresh project's node_modules/sluice, beside only the required
   * dependencies (hono, zod, croner) and @types/node: none of the optional peers.
   */
  test('compile under strict tsc with skipLibCheck false, without the optional peers installed', async () => {
    const project = await mkdtemp(join(tmpdir(), 'sluice-types-'))
    try {
      const modules = join(project, 'node_modules')
      await mkdir(join(modules, '@types'), { recursive: true })
      await cp(built.outDir, join(modules, 'sluice/dist'), {
        recursive: true,
        filter: (src) => !src.includes('/functions') && !src.includes('vercel-output'),
      })
      await copyFile(join(root, 'package.json'), join(modules, 'sluice/package.json'))
      for (const dep of ['hono', 'zod', 'croner'])
        await symlink(join(root, 'node_modules', dep), join(modules, dep), 'dir')
      await symlink(join(root, 'node_modules/@types/node'), join(modules, '@types/node'), 'dir')
      await writeFile(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            // Not part of strict, but projects turn it on: an option read from the environment
            // (string | undefined) must still fit.
            exactOptionalPropertyTypes: true,
            skipLibCheck: false,
            noEmit: true,
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'es2022',
            types: ['node'],
          },
          files: ['app.ts'],
        }),
      )
      await writeFile(join(project, 'package.json'), '{"type":"module"}\n')
      await writeFile(
        join(project, 'app.ts'),
        [
          "import * as z from 'zod'",
          "import { createApp, createSluice, defineJob, fromPg, fromPglite, fromNeonHttp } from 'sluice'",
          "import { drainHandler, maintainHandler } from 'sluice/aws-lambda'",
          "import { vercelHandlers } from 'sluice/vercel'",
          "const hello = defineJob({ name: 'hello', input: z.object({ who: z.string() }), run: async () => {} })",
          'export const sluice = createSluice({ jobs: [hello], database: process.env.DATABASE_URL, schema: process.env.SLUICE_SCHEMA })',
          "await sluice.enqueue(hello, { who: 'x' })",
          'export const app = createApp(sluice)',
          'export const drain = drainHandler(sluice)',
          'export const maintain = maintainHandler(sluice)',
          'export const { GET, POST } = vercelHandlers(sluice)',
          'export const adapters = [fromPg, fromPglite, fromNeonHttp]',
          '',
        ].join('\n'),
      )
      const tsc = spawnSync(
        process.execPath,
        [join(root, 'node_modules/typescript/bin/tsc'), '-p', project],
        {
          encoding: 'utf8',
        },
      )
      expect(`${tsc.stdout}${tsc.stderr}`).toBe('')
      expect(tsc.status).toBe(0)
    } finally {
      await rm(project, { recursive: true, force: true })
    }
  }, 300_000)
})

describe('the package', () => {
  const pkg = async () =>
    JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, unknown>
    > & {
      scripts: Record<string, string>
      dependencies: Record<string, string>
    }

  test('npm pack builds dist/ first, and the registry page links to the repository', async () => {
    const json = await pkg()
    expect(json.scripts.prepack).toMatch(/scripts\/build\.ts --library/)
    expect(json.repository).toMatchObject({ url: expect.stringContaining('github.com/sluice-dev/sluice') })
    expect(json.homepage).toMatch(/^https:\/\//)
    expect(json.bugs).toMatchObject({ url: expect.stringMatching(/^https:\/\/.*\/issues$/) })
  })

  test('the README renders on the registry: its links and pictures are absolute', async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8')
    const relative = [...readme.matchAll(/\]\(([^)]+)\)|<img src="([^"]+)"/g)]
      .map((m) => m[1] ?? m[2]!)
      .filter((target) => !/^(https?:|#|mailto:)/.test(target))
    expect(relative).toEqual([])
    expect(readme).toMatch(/await sluice\.close\(\)/)
  })

  test('@hono/node-server is only for the dev server: an optional peer, not a dependency', async () => {
    const json = await pkg()
    expect(Object.keys(json.dependencies).sort()).toEqual(['croner', 'hono', 'zod'])
    expect(json.peerDependenciesMeta).toMatchObject({ '@hono/node-server': { optional: true } })
  })
})

describe('lean functions', () => {
  test('the drain and maintenance bundles carry no admin API, OpenAPI, dashboard or migration SQL', async () => {
    for (const fn of ['aws/drain.mjs', 'aws/maintain.mjs']) {
      const code = await readFile(join(built.outDir, 'functions', fn), 'utf8')
      expect(code, fn).not.toContain('openapi:"3.1')
      expect(code, fn).not.toContain('/api/v1')
      expect(code, fn).not.toContain('dashboard.css')
      expect(code, fn).not.toContain('CREATE TABLE :SLUICE_SCHEMA')
      expect(code, fn).toContain('built without Sluice')
    }
    // The all-in-one api function keeps everything.
    const api = await readFile(join(built.outDir, 'functions/aws/api.mjs'), 'utf8')
    expect(api).toContain('/api/v1')
    expect(api).toContain('openapi:"3.1')
  })

  test("the drain bundles leave out croner and every Node bundle pg's native glue", async () => {
    // The source map beside each bundle names the files in it.
    for (const fn of ['aws/drain.mjs', 'vercel/drain.mjs', 'aws/maintain.mjs', 'aws/api.mjs']) {
      const map = JSON.parse(await readFile(join(built.outDir, 'functions', `${fn}.map`), 'utf8'))
      const sources = (map as { sources: string[] }).sources
      expect(
        sources.some((s) => s.includes('/croner/')),
        fn,
      ).toBe(!fn.endsWith('drain.mjs'))
      expect(
        sources.some((s) => s.endsWith('/pg/lib/client.js')),
        fn,
      ).toBe(true)
      expect(
        sources.filter((s) => s.includes('/pg/lib/native/')),
        fn,
      ).toEqual([expect.stringMatching(/\/pg\/lib\/native\/index\.js$/)])
    }
  })

  test("a drain's recurring tasks load without their schedules; any other function reads them", async () => {
    const both = await build({
      outDir: join(built.outDir, 'schedules'),
      library: false,
      log: () => {},
      functionList: [
        { entry: 'test/fixtures/reads-schedules.ts', out: 'drain.mjs', target: 'node', schedules: false },
        { entry: 'test/fixtures/reads-schedules.ts', out: 'other.mjs', target: 'node' },
      ],
    })
    type Fixture = typeof import('../fixtures/reads-schedules.js')
    const load = (file: string): Promise<Fixture> =>
      import(pathToFileURL(join(both.outDir, 'functions', file)).href)
    const drain = await load('drain.mjs')
    const other = await load('other.mjs')
    expect(other.firstSlot('0 3 * * *')).toEqual({ slot: '1970-01-01T03:00:00.000Z' })
    expect(other.firstSlot('61 * * * *')).toMatchObject({ code: 'INVALID_CONFIG' })
    // The drain defines the task, and a read of its schedule says where schedules are read.
    expect(drain.firstSlot('0 3 * * *')).toEqual({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('built without recurring schedules'),
    })
    // Only Sluice's own module is replaced: a project's file at the same path is bundled as it is.
    expect(drain.mine).toBe(other.mine)
    expect(drain.mine).toContain('own controls/schedule')
  })

  test('loading a function builds only the schemas of the options its app sets and its first requests', () => {
    const builds = (fn: string) => {
      const child = spawnSync(
        process.execPath,
        ['--import', 'tsx', 'test/fixtures/zod-builds.ts', join(built.outDir, 'functions', fn)],
        { cwd: root, encoding: 'utf8' },
      )
      expect(child.status, child.stderr).toBe(0)
      return (JSON.parse(child.stdout) as { imported: number }).imported
    }
    // The example app sets admission policies, subscribers and a recurring task, so theirs are built.
    // When every module built its schemas at import: 746 and 1,276; when this test was written, 367 and 870.
    expect(builds('aws/drain.mjs')).toBeLessThanOrEqual(450)
    // The admin API's responses are built for its first request or the OpenAPI document.
    expect(builds('aws/api.mjs')).toBeLessThanOrEqual(1000)
  })

  test("the drain, maintenance and edge enqueue bundles carry none of Hono's default routers", async () => {
    // keepNames keeps the routers' class names. aws/maintain.mjs answers EventBridge: no router at all.
    const routers = (code: string) => [...new Set(code.match(/"[A-Za-z]*Router"/g) ?? [])].sort()
    const lean = ['aws/drain.mjs', 'vercel/drain.mjs', 'vercel/maintain.mjs', 'vercel/enqueue.js']
    for (const fn of lean) {
      const code = await readFile(join(built.outDir, 'functions', fn), 'utf8')
      expect(routers(code), fn).toEqual(['"PatternRouter"', '"StrictPatternRouter"'])
    }
    const maintain = await readFile(join(built.outDir, 'functions/aws/maintain.mjs'), 'utf8')
    expect(routers(maintain)).toEqual([])
    const api = await readFile(join(built.outDir, 'functions/aws/api.mjs'), 'utf8')
    expect(routers(api)).toContain('"SmartRouter"')
  })

  test('the drain, maintenance and edge enqueue bundles carry zod/mini and none of zod classic', async () => {
    // keepNames keeps zod's class names: classic's ZodString, mini's ZodMiniString.
    for (const fn of ['aws/drain.mjs', 'aws/maintain.mjs', 'vercel/drain.mjs', 'vercel/enqueue.js']) {
      const code = await readFile(join(built.outDir, 'functions', fn), 'utf8')
      expect(code, fn).toContain('"ZodMiniObject"')
      expect(code, fn).not.toContain('"ZodObject"')
      expect(code, fn).not.toContain('"ZodString"')
    }
  })
})
