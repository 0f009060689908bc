/**
 * The consumer suite: this package as a user gets it. `npm pack`, a fresh project outside the
 * repository, the tarball installed with the peers docs/getting-started.md names, then, in order:
 *
 *   tsc --noEmit (strict, skipLibCheck false)          → exit 0
 *   node app/run.ts (migrate, enqueue, publish, drain)  → the job and the subscriber completed
 *   sluice init aws → sluice migrate → sluice build → osls package
 *     → the packaged drain with a Function URL (v2) event → 200 with the secret, 401 without
 *   sluice init vercel → sluice build --vercel → the output as `vercel build` merges it (crons,
 *     routes, maxDuration) → its function answers an enqueue (202) at /api/jobs/… and a drain (200)
 *   sluice init next → next build (no DATABASE_URL, no SLUICE_SECRET) → next start
 *     → POST /api/sluice/jobs/send-welcome 202, POST /api/sluice/drain 200
 *   sluice init cloudflare → sluice build → wrangler deploy --dry-run → exit 0
 *   node server.mjs (Express, Sluice mounted at /sluice) → POST /sluice/jobs/… 202, /sluice/drain 200
 *
 * `npm run test:consumer` (its own step in .ci/run: it needs the npm registry or npm's cache).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { invokeLocal, OFFLINE_ENV } from '../deploy/support.js'
import { root } from '../helpers/build.js'
import { databaseUrl, uniqueSchema } from '../helpers/db.js'
import { httpEventV2 } from '../helpers/lambda.js'
import { unzip } from '../helpers/zip.js'
import { type Consumer, makeConsumer, readJson, sh, startProcess, steps, waitFor } from './project.js'

const SECRET = 'consumer-suite-secret-0123456789'
const schema = uniqueSchema('consumer')
const runtimeEnv = { DATABASE_URL: databaseUrl, SLUICE_SCHEMA: schema, SLUICE_SECRET: SECRET }

let consumer: Consumer

beforeAll(async () => {
  consumer = await makeConsumer()
}, 900_000)

afterAll(async () => {
  console.log(`consumer suite steps:\n  ${steps.join('\n  ')}`)
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await client.end()
  await consumer?.remove()
})

const sluice = (args: string[], cwd: string, env: Record<string, string | undefined> = {}) =>
  sh(consumer.bin('sluice'), args, { cwd, env })

const freePort = () =>
  new Promise<number>((ok) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => ok(port))
    })
  })

describe('a fresh project with the packed package', () => {
  test('strict tsc (skipLibCheck false) accepts every public entry', async () => {
    const dir = await consumer.sub('app')
    await writeFile(
      join(dir, 'app.ts'),
      `import { createSluice, defineJob, defineSubscriber } from 'sluice'
import { drainHandler, maintainHandler, apiHandler } from 'sluice/aws-lambda'
import { vercelHandlers, waitUntil } from 'sluice/vercel'
import { createEdgeClient, defineContract } from 'sluice/edge'
import { esbuildPreset, buildFunctions } from 'sluice/build'
import * as z from 'zod'

export const signups: string[] = []

export const sendWelcome = defineJob({
  name: 'send-welcome',
  queue: 'emails',
  input: z.object({ email: z.email() }),
  run: async (input, ctx) => {
    signups.push(\`\${input.email}#\${ctx.attempt}\`)
  },
})

export const audit = defineSubscriber({
  name: 'audit',
  topic: 'users.#',
  run: async (payload: unknown) => {
    signups.push(\`event:\${JSON.stringify(payload)}\`)
  },
})

export const sluice = createSluice({ jobs: [sendWelcome], subscribers: [audit] })

export const contract = defineContract({ name: 'send-welcome', queue: 'emails', input: z.object({ email: z.email() }) })
export const edge = () => createEdgeClient({ database: 'postgres://u@h/db', jobs: [contract] })
export const handlers = [drainHandler(sluice), maintainHandler(sluice), apiHandler(sluice)]
export const vercel = vercelHandlers(sluice, { maxDurationMs: 30_000 })
export const later = (p: Promise<unknown>): boolean => waitUntil(p)
export const preset = esbuildPreset('node', { external: ['sharp'] })
export const build = buildFunctions
`,
    )
    await writeFile(
      join(dir, 'run.ts'),
      `import { sluice, sendWelcome, signups } from './app.js'

await sluice.migrate()
const job = await sluice.enqueue(sendWelcome, { email: 'ada@example.com' })
await sluice.publish('users.signed-up', { email: 'ada@example.com' })
const summary = await sluice.drain({ budgetMs: 20_000 })
await sluice.close()
console.log(JSON.stringify({ job, summary, signups }))
`,
    )
    await sh(consumer.bin('tsc'), ['-p', '.'], { cwd: dir })
  })

  test('a small app migrates, enqueues, publishes and drains against the database', async () => {
    const dir = join(consumer.dir, 'app')
    const { stdout } = await sh(process.execPath, ['--import', 'tsx', 'run.ts'], {
      cwd: dir,
      env: runtimeEnv,
    })
    const result = JSON.parse(stdout.trim().split('\n').pop()!)
    expect(result.job).toMatchObject({ id: expect.any(String) })
    expect(result.summary).toMatchObject({ completed: 2, failed: 0 })
    expect(result.signups.sort()).toEqual(['ada@example.com#1', 'event:{"email":"ada@example.com"}'])
  })

  test('a CommonJS project (npm init -y writes "type": "commonjs") requires every entry', async () => {
    const dir = await consumer.sub('cjs')
    await writeFile(join(dir, 'package.json'), '{"name":"cjs","private":true,"type":"commonjs"}\n')
    await writeFile(
      join(dir, 'index.js'),
      `const entries = ['sluice', 'sluice/edge', 'sluice/aws-lambda', 'sluice/vercel', 'sluice/build']
const { createSluice } = require('sluice')
const sluice = createSluice({ jobs: [] })
console.log(JSON.stringify({ loaded: entries.map((name) => Object.keys(require(name)).length > 0), sluice: typeof sluice.enqueue }))
`,
    )
    const { stdout } = await sh(process.execPath, ['index.js'], { cwd: dir })
    expect(JSON.parse(stdout.trim())).toEqual({ loaded: [true, true, true, true, true], sluice: 'function' })
    steps.push('ok   require() of every entry from a "type": "commonjs" project')
  })
})

describe('sluice init aws → sluice build → osls package → the packaged drain', () => {
  test('a Function URL event drains with the secret (200) and is refused without it (401)', async () => {
    const dir = await consumer.sub('aws')
    const init = await sluice(['init', 'aws'], dir)
    expect(init.stdout).toContain('wrote serverless.yml')
    // The app as its owner grows it: a recurring task, whose schedules the drain never reads.
    const config = await readFile(join(dir, 'sluice.config.ts'), 'utf8')
    const grown = config
      .replace(
        "import { createSluice, defineJob } from 'sluice'",
        "import { createSluice, defineJob, defineRecurring } from 'sluice'",
      )
      .replace(
        'export const sluice = createSluice({ jobs })',
        "export const sluice = createSluice({ jobs, recurring: [defineRecurring({ name: 'nightly', cron: '0 3 * * *', job: sendWelcome, input: { email: 'ops@example.com' } })] })",
      )
    expect(grown).toContain('recurring: [defineRecurring(')
    await writeFile(join(dir, 'sluice.config.ts'), grown)
    await sluice(['migrate'], dir, runtimeEnv)
    await sluice(['enqueue', 'send-welcome', '{"email":"grace@example.com"}'], dir, runtimeEnv)
    const build = await sluice(['build'], dir)
    expect(build.stdout).toMatch(/functions\/aws\/drain\.mjs\s+node/)
    // The installed package's build leaves croner out of the drain, not out of maintenance (a
    // source map names the files in its bundle).
    const bundled = async (fn: string) =>
      (
        JSON.parse(await readFile(join(dir, `dist/functions/aws/${fn}.mjs.map`), 'utf8')) as {
          sources: string[]
        }
      ).sources
    expect((await bundled('drain')).some((file) => file.includes('/croner/'))).toBe(false)
    expect((await bundled('maintain')).some((file) => file.includes('/croner/'))).toBe(true)
    steps.push('     sluice build: the drain without croner, maintenance with it')
    await sh(process.execPath, [join(root, 'node_modules/osls/bin/serverless.js'), 'package'], {
      cwd: dir,
      env: { HOME: dir, ...OFFLINE_ENV },
    })
    await mkdir(join(dir, 'run'), { recursive: true })
    await unzip(join(dir, '.serverless/drain.zip'), join(dir, 'run'))
    const env = {
      ...runtimeEnv,
      NODE_OPTIONS: '--enable-source-maps',
      AWS_LAMBDA_FUNCTION_NAME: 'consumer-drain',
    }
    const refused = invokeLocal(
      'dist/functions/aws/drain.handler',
      httpEventV2('POST', '/', { body: '{}' }),
      {
        cwd: join(dir, 'run'),
        env,
      },
    )
    const no = (await refused.result) as { statusCode: number }
    expect(no.statusCode, refused.stderr()).toBe(401)
    steps.push('     drain without credentials → 401')
    const drained = invokeLocal(
      'dist/functions/aws/drain.handler',
      httpEventV2('POST', '/', {
        body: '{"queues":["emails"]}',
        headers: { authorization: `Bearer ${SECRET}` },
      }),
      { cwd: join(dir, 'run'), env },
    )
    const yes = (await drained.result) as { statusCode: number; body: string }
    expect(yes.statusCode, drained.stderr()).toBe(200)
    expect(JSON.parse(yes.body)).toMatchObject({ completed: 1 })
    steps.push('     drain with Bearer SLUICE_SECRET → 200, completed 1')
  })
})

describe('sluice init → sluice dev on the embedded database', () => {
  test('serves, and runs a job enqueued from another command in the same directory', async () => {
    const dir = await consumer.sub('dev')
    await sluice(['init', 'aws'], dir)
    const local = { DATABASE_URL: undefined, NO_COLOR: '1' }
    steps.push('ok   sluice dev --port 0')
    const dev = startProcess(consumer.bin('sluice'), ['dev', '--port', '0'], { cwd: dir, env: local })
    try {
      await waitFor(
        async () => (dev.output().includes('Sluice dev server is running') ? true : undefined),
        180_000,
        `sluice dev to serve:\n${dev.output()}`,
      )
      const enqueued = await sluice(['enqueue', 'send-welcome', '{"email":"ada@example.com"}'], dir, local)
      expect(enqueued.stdout).toContain('Enqueued send-welcome on queue emails')
      await waitFor(
        async () => (/send-welcome #\d+\s+attempt 1\/5\s+completed/.test(dev.output()) ? true : undefined),
        60_000,
        'the job to run in sluice dev',
      )
      expect(dev.output()).toContain('welcome, ada@example.com (attempt 1)')
      steps.push('     enqueue through the dev server → the job ran, completed')
    } finally {
      await dev.stop()
    }
  })
})

describe('sluice init vercel → sluice build --vercel', () => {
  test('the output as vercel build merges it, and its function enqueues (202) and drains (200)', async () => {
    const dir = await consumer.sub('vercel')
    await sluice(['init', 'vercel'], dir)
    await sluice(['migrate'], dir, runtimeEnv)
    await sluice(['build', '--vercel'], dir, {
      VERCEL: '1',
      DATABASE_URL: 'postgres://u:p@db.example.com/app',
      SLUICE_SECRET: SECRET,
      CRON_SECRET: SECRET,
      SLUICE_DRAIN_URL: 'https://shop.example.com/api/drain',
    })
    const output = join(dir, '.vercel/output')
    const config = await readJson<{ crons?: unknown[]; routes: { src?: string; dest?: string }[] }>(
      join(output, 'config.json'),
    )
    const vercelJson = await readJson<{ crons?: unknown[]; buildCommand: string }>(join(dir, 'vercel.json'))
    expect(vercelJson.buildCommand).toBe('sluice build --vercel')
    // `vercel build` appends vercel.json's crons to the output's own: scheduled once.
    expect([...(config.crons ?? []), ...(vercelJson.crons ?? [])]).toEqual([
      { path: '/api/maintain', schedule: '* * * * *' },
    ])
    expect(config.routes).toContainEqual({ src: '^/api(?:/.*)?$', dest: '/api/sluice' })
    const vc = await readJson<Record<string, unknown>>(
      join(output, 'functions/api/sluice.func/.vc-config.json'),
    )
    expect(vc).toMatchObject({
      runtime: 'nodejs24.x',
      handler: 'index.mjs',
      maxDuration: 60,
      environment: { NODE_OPTIONS: '--enable-source-maps', SLUICE_MAX_DURATION_MS: '60000' },
    })
    // The drain and maintenance are lean functions of their own, at their own paths.
    expect(
      await readJson<Record<string, unknown>>(join(output, 'functions/api/drain.func/.vc-config.json')),
    ).toMatchObject({ maxDuration: 60, environment: { SLUICE_MAX_DURATION_MS: '60000' } })
    const fn = (name: string) => JSON.stringify(join(output, `functions/api/${name}.func/index.mjs`))
    const script = `
const api = await import(${fn('sluice')})
const lean = await import(${fn('drain')})
const maintenance = await import(${fn('maintain')})
const call = (POST, path, body) => POST(new Request('https://consumer.vercel.app' + path, {
  method: 'POST', headers: { authorization: 'Bearer ${SECRET}', 'content-type': 'application/json' }, body: JSON.stringify(body) }))
const enqueued = await call(api.POST, '/api/jobs/send-welcome', { input: { email: 'lin@example.com' } })
const drained = await call(lean.POST, '/api/drain', { queues: ['emails'] })
const maintained = await call(maintenance.POST, '/api/maintain', {})
console.log(JSON.stringify({ enqueue: enqueued.status, drain: drained.status, summary: await drained.json(), maintain: maintained.status }))
process.exit(0)
`
    const { stdout } = await sh(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
      env: runtimeEnv,
    })
    const result = JSON.parse(stdout.trim().split('\n').pop()!)
    expect(result).toMatchObject({ enqueue: 202, drain: 200, summary: { completed: 1 }, maintain: 200 })
    steps.push(
      '     POST /api/jobs/send-welcome → 202; POST /api/drain (its own function) → 200, completed 1; POST /api/maintain → 200',
    )
  })
})

describe('sluice init next → next build → next start', () => {
  test('builds with no database or secrets, then answers an enqueue (202) and a drain (200)', async () => {
    const dir = await consumer.sub('next', {
      compilerOptions: {
        target: 'es2022',
        // What create-next-app writes (Next's own .d.ts need esnext and skipLibCheck; the strict
        // check of Sluice's types with skipLibCheck false is the first step's).
        lib: ['dom', 'dom.iterable', 'esnext'],
        module: 'esnext',
        moduleResolution: 'bundler',
        jsx: 'preserve',
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        esModuleInterop: true,
        isolatedModules: true,
        resolveJsonModule: true,
        incremental: true,
        plugins: [{ name: 'next' }],
      },
      include: ['next-env.d.ts', '**/*.ts', '**/*.tsx', '.next/types/**/*.ts'],
      exclude: ['node_modules'],
    })
    await mkdir(join(dir, 'app'), { recursive: true })
    await writeFile(
      join(dir, 'app/layout.tsx'),
      'export default function RootLayout({ children }: { children: React.ReactNode }) {\n  return (\n    <html lang="en">\n      <body>{children}</body>\n    </html>\n  )\n}\n',
    )
    await writeFile(
      join(dir, 'app/page.tsx'),
      'export default function Page() {\n  return <p>consumer</p>\n}\n',
    )
    await sluice(['init', 'next'], dir)
    const route = await readFile(join(dir, 'app/api/sluice/[...route]/route.ts'), 'utf8')
    expect(route).toContain("basePath: '/api/sluice'")
    // /api/sluice/drain and /api/sluice/maintain are lean routes of their own.
    expect(await readFile(join(dir, 'app/api/sluice/drain/route.ts'), 'utf8')).toContain('vercelDrain')
    const noSecrets = {
      DATABASE_URL: undefined,
      SLUICE_SECRET: undefined,
      SLUICE_SCHEMA: undefined,
      NEXT_TELEMETRY_DISABLED: '1',
    }
    await sh(consumer.bin('next'), ['build'], { cwd: dir, env: noSecrets })
    await sluice(['migrate'], dir, runtimeEnv)
    const port = await freePort()
    const server = startProcess(consumer.bin('next'), ['start', '-p', String(port), '-H', '127.0.0.1'], {
      cwd: dir,
      env: { ...runtimeEnv, NEXT_TELEMETRY_DISABLED: '1' },
    })
    try {
      const base = `http://127.0.0.1:${port}/api/sluice`
      await waitFor(
        async () => ((await fetch(`${base}/health`)).ok ? true : undefined),
        60_000,
        `next start (${server.output()})`,
      )
      const call = (path: string, body: unknown) =>
        fetch(`${base}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      const enqueued = await call('/jobs/send-welcome', { input: { email: 'kay@example.com' } })
      expect(enqueued.status, server.output()).toBe(202)
      const drained = await call('/drain', { queues: ['emails'] })
      expect(drained.status, server.output()).toBe(200)
      expect(await drained.json()).toMatchObject({ completed: 1 })
      const maintained = await fetch(`${base}/maintain`, { headers: { authorization: `Bearer ${SECRET}` } })
      expect(maintained.status, server.output()).toBe(200)
      expect(await maintained.json()).toMatchObject({ tasks: expect.any(Array) })
      steps.push(
        '     next start: POST /api/sluice/jobs/send-welcome → 202; POST /api/sluice/drain (its own route) → 200, completed 1; GET /api/sluice/maintain → 200',
      )
    } finally {
      await server.stop()
    }
  })
})

describe('sluice init cloudflare → sluice build → wrangler deploy --dry-run', () => {
  test('wrangler accepts the worker bundle', async () => {
    const dir = await consumer.sub('cloudflare')
    await sluice(['init', 'cloudflare'], dir)
    const build = await sluice(['build'], dir)
    expect(build.stdout).toMatch(/functions\/cloudflare\/worker\.js\s+edge/)
    const { stdout, stderr } = await sh(
      consumer.bin('wrangler'),
      ['deploy', '--dry-run', '--outdir', 'wrangler-out'],
      {
        cwd: dir,
        env: { ...OFFLINE_ENV, HOME: dir, XDG_CONFIG_HOME: join(dir, '.config') },
      },
    )
    expect(`${stdout}${stderr}`).toContain('--dry-run: exiting now.')
    steps.push('     wrangler deploy --dry-run → "--dry-run: exiting now."')
  })
})

describe('an Express server with Sluice mounted', () => {
  test('answers an enqueue (202) and a drain (200) under /sluice', async () => {
    const dir = await consumer.sub('express')
    await writeFile(
      join(dir, 'server.mjs'),
      `import express from 'express'
import { getRequestListener } from '@hono/node-server'
import { createApp, createSluice, defineJob } from 'sluice'
import * as z from 'zod'

const sendWelcome = defineJob({
  name: 'send-welcome',
  queue: 'emails',
  input: z.object({ email: z.email() }),
  run: async () => {},
})
const sluice = createSluice({ jobs: [sendWelcome] })

const app = express()
app.use('/sluice', getRequestListener(createApp(sluice).fetch))
app.get('/', (req, res) => res.send('your app'))
const server = app.listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => server.close(() => sluice.close().then(() => process.exit(0))))
`,
    )
    const port = await freePort()
    const server = startProcess(process.execPath, ['server.mjs'], {
      cwd: dir,
      env: { ...runtimeEnv, PORT: String(port) },
    })
    try {
      const base = `http://127.0.0.1:${port}/sluice`
      await waitFor(
        async () => ((await fetch(`${base}/health`)).ok ? true : undefined),
        30_000,
        `express (${server.output()})`,
      )
      const call = (path: string, body: unknown) =>
        fetch(`${base}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      expect(
        (await call('/jobs/send-welcome', { input: { email: 'max@example.com' } })).status,
        server.output(),
      ).toBe(202)
      const drained = await call('/drain', { queues: ['emails'] })
      expect(drained.status, server.output()).toBe(200)
      expect(await drained.json()).toMatchObject({ completed: 1 })
      steps.push('     express: POST /sluice/jobs/send-welcome → 202; POST /sluice/drain → 200, completed 1')
    } finally {
      await server.stop()
    }
  })
})
