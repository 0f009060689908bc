/**
 * Vercel Functions without Next.js, as `sluice build --vercel` lays them out: every /api path,
 * however many segments, reaches the Node function; a file's `export const maxDuration` is the
 * function's limit and the drain's; edge handlers get `waitUntil` from `sluice/edge`.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { buildFunctions } from '../../src/build/build.js'
import { declared, discoverFunctions } from '../../src/build/functions.js'
import { type VercelRoute, vercelRoutes } from '../../src/build/vercel-output.js'
import { vercelWaitUntil, waitUntil } from '../../src/edge.js'
import { root } from '../helpers/build.js'

/** The function a path reaches, as Vercel applies the output's routes after its filesystem. */
function routeTo(
  routes: readonly VercelRoute[],
  functions: readonly string[],
  path: string,
): string | undefined {
  const file = (p: string) => functions.find((fn) => `/${fn}` === p)
  let afterFilesystem = false
  for (const route of routes) {
    if (route.handle === 'filesystem') {
      if (file(path)) return file(path)
      afterFilesystem = true
      continue
    }
    if (afterFilesystem && route.src && new RegExp(route.src).test(path)) return file(route.dest ?? '')
  }
  return undefined
}

let project: string
beforeAll(async () => {
  await mkdir(join(root, 'node_modules/.cache'), { recursive: true })
  project = await mkdtemp(join(root, 'node_modules/.cache/sluice-vercel-'))
  await mkdir(join(project, 'functions/vercel/lib'), { recursive: true })
  await writeFile(
    join(project, 'functions/vercel/sluice.ts'),
    "import { answer } from './lib/answer.js'\nexport const maxDuration = 13\nexport const GET = answer\nexport const POST = answer\n",
  )
  await writeFile(
    join(project, 'functions/vercel/enqueue.ts'),
    "export const config = { runtime: 'edge' }\nexport default (r: Request) => new Response(new URL(r.url).pathname)\n",
  )
  // A lean drain of its own: /api/drain only; the catch-all stays with the API's function.
  await writeFile(
    join(project, 'functions/vercel/drain.ts'),
    "import { answer } from './lib/answer.js'\nexport const maxDuration = 30\nexport const POST = answer\n",
  )
  await writeFile(
    join(project, 'functions/vercel/lib/answer.ts'),
    'export const answer = (r: Request) => new Response(new URL(r.url).pathname)\n',
  )
})
afterAll(() => rm(project, { recursive: true, force: true }))

describe('the function table', () => {
  test('read from the files: edge by declaration, maxDuration in seconds, helpers in subfolders skipped', async () => {
    expect(declared("export const runtime = 'edge'")).toEqual({ edge: true })
    expect(declared('export const config = { runtime: "edge", regions: ["fra1"] }')).toEqual({ edge: true })
    expect(declared('export const maxDuration = 300')).toEqual({ edge: false, maxDurationS: 300 })
    expect(await discoverFunctions(project)).toEqual([
      {
        entry: 'functions/vercel/drain.ts',
        out: 'vercel/drain.mjs',
        target: 'node',
        vercel: { path: 'api/drain', maxDurationS: 30 },
        migrations: false,
        schedules: false,
      },
      {
        entry: 'functions/vercel/enqueue.ts',
        out: 'vercel/enqueue.js',
        target: 'edge',
        vercel: { path: 'api/enqueue' },
      },
      {
        entry: 'functions/vercel/sluice.ts',
        out: 'vercel/sluice.mjs',
        target: 'node',
        vercel: { path: 'api/sluice', maxDurationS: 13 },
      },
    ])
  })
})

describe('sluice build --vercel', () => {
  let output: string
  beforeAll(async () => {
    output = join(project, '.vercel/output')
    await buildFunctions({ root: project, vercelOutput: output, env: {}, log: () => {} })
  }, 60_000)

  test('multi-segment /api paths reach the API function; the edge function keeps the paths below its own, the drain its own path', async () => {
    const config = JSON.parse(await readFile(join(output, 'config.json'), 'utf8')) as {
      routes: VercelRoute[]
    }
    expect(config.routes).toEqual(vercelRoutes(await discoverFunctions(project)))
    const functions = ['api/sluice', 'api/enqueue', 'api/drain']
    expect(routeTo(config.routes, functions, '/api/jobs/welcome-email')).toBe('api/sluice')
    expect(routeTo(config.routes, functions, '/api/events/orders.created')).toBe('api/sluice')
    expect(routeTo(config.routes, functions, '/api/drain')).toBe('api/drain')
    expect(routeTo(config.routes, functions, '/api/health')).toBe('api/sluice')
    expect(routeTo(config.routes, functions, '/api/a/b/c/d')).toBe('api/sluice')
    expect(routeTo(config.routes, functions, '/api/enqueue/welcome-email')).toBe('api/enqueue')
    expect(routeTo(config.routes, functions, '/api/enqueue/events/orders.created')).toBe('api/enqueue')
    expect(routeTo(config.routes, functions, '/elsewhere')).toBeUndefined()
    // The rewrite keeps the URL: the function sees the original path.
    const { POST } = await import(join(output, 'functions/api/sluice.func/index.mjs'))
    const res = await POST(new Request('https://x.vercel.app/api/jobs/welcome-email', { method: 'POST' }))
    expect(await res.text()).toBe('/api/jobs/welcome-email')
  })

  test("the file's maxDuration is the function's limit and its drain budget", async () => {
    const vc = JSON.parse(await readFile(join(output, 'functions/api/sluice.func/.vc-config.json'), 'utf8'))
    expect(vc).toMatchObject({
      runtime: 'nodejs24.x',
      maxDuration: 13,
      environment: { NODE_OPTIONS: '--enable-source-maps', SLUICE_MAX_DURATION_MS: '13000' },
    })
    const edge = JSON.parse(
      await readFile(join(output, 'functions/api/enqueue.func/.vc-config.json'), 'utf8'),
    )
    expect(edge).toEqual({ runtime: 'edge', entrypoint: 'index.js' })
  })
})

describe('waitUntil for edge handlers (sluice/edge)', () => {
  test("hands the promise to the Vercel request's waitUntil, or says there is none", async () => {
    expect(vercelWaitUntil()).toBeUndefined()
    const late = Promise.resolve('late')
    expect(waitUntil(late)).toBe(false)
    const handed: Promise<unknown>[] = []
    const holder = Symbol.for('@vercel/request-context')
    const globals = globalThis as Record<symbol, unknown>
    globals[holder] = { get: () => ({ waitUntil: (promise: Promise<unknown>) => handed.push(promise) }) }
    try {
      expect(waitUntil(late)).toBe(true)
      expect(handed).toEqual([late])
    } finally {
      delete globals[holder]
    }
  })
})
