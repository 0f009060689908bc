/**
 * The Vercel deployment as `vercel build` leaves it: the build's Build Output API tree plus what the
 * CLI adds from vercel.json (its crons), the runtime each function gets, and the wake-up an enqueue
 * hands to the request's waitUntil.
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { setup } from '../../examples/schema.js'
import { build, NODE_RUNTIME } from '../../scripts/build.js'
import { deployEnvProblems } from '../../src/platforms/secrets.js'
import { buildToTemp, root, setEnv, type TempBuild } from '../helpers/build.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'
import { run, startDrainStub } from './support.js'

const SECRET = 'vercel-deploy-secret-0123456789'
const ORIGIN = 'https://sluice-example.vercel.app'

let env: TestSluice
let built: TempBuild
let output: string

beforeAll(async () => {
  env = await makeSluice({ jobs: [] })
  await setup(env.sluice)
  built = await buildToTemp({
    functions: ['functions/vercel/sluice.ts', 'functions/vercel/enqueue.ts'],
    vercel: true,
  })
  output = join(built.outDir, 'vercel-output')
})
afterAll(async () => {
  await built?.remove()
  await env?.cleanup()
})

const readJson = async <T>(file: string): Promise<T> => JSON.parse(await readFile(file, 'utf8')) as T

describe('vercel build', () => {
  test('schedules /api/maintain once: the CLI adds vercel.json crons to the output, which has none', async () => {
    const config = await readJson<{ crons?: unknown[] }>(join(output, 'config.json'))
    const vercelJson = await readJson<{ crons?: unknown[] }>(join(root, 'vercel.json'))
    // What `vercel build` writes to .vercel/output/config.json.
    const deployed = [...(config.crons ?? []), ...(vercelJson.crons ?? [])]
    expect(deployed).toEqual([{ path: '/api/maintain', schedule: '* * * * *' }])
  })

  test('the Node function runs on the current LTS, with its source map and source maps on', async () => {
    const dir = join(output, 'functions/api/sluice.func')
    const vc = await readJson<{ runtime: string; handler: string; environment: Record<string, string> }>(
      join(dir, '.vc-config.json'),
    )
    expect(vc.runtime).toBe('nodejs24.x')
    expect(vc.runtime).toBe(NODE_RUNTIME)
    expect(vc.environment.NODE_OPTIONS).toBe('--enable-source-maps')
    const code = await readFile(join(dir, vc.handler), 'utf8')
    const map = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(code)?.[1]
    expect(map).toBeDefined()
    expect(existsSync(join(dir, map!))).toBe(true)
  })

  test('engines names bounded LTS lines: Vercel picks the runtime above without a warning', async () => {
    const { engines } = await readJson<{ engines: { node: string } }>(join(root, 'package.json'))
    // Vercel warns about open ranges (">=20") and picks the newest supported major in range.
    expect(engines.node).not.toMatch(/>|\*|x$|\^/)
    const majors = engines.node.split('||').map((part) => Number(part.trim()))
    expect(majors.every((major) => Number.isInteger(major) && major % 2 === 0)).toBe(true)
    expect(`nodejs${Math.max(...majors)}.x`).toBe(NODE_RUNTIME)
    // The code still runs where the tests run.
    expect(majors).toContain(Number(process.versions.node.split('.')[0]))
  })

  test("an enqueue hands its drain wake-up to the request's waitUntil", async () => {
    const drain = await startDrainStub()
    const handed: Promise<unknown>[] = []
    const holder = Symbol.for('@vercel/request-context')
    const globals = globalThis as Record<symbol, unknown>
    globals[holder] = { get: () => ({ waitUntil: (promise: Promise<unknown>) => handed.push(promise) }) }
    const restore = setEnv({
      DATABASE_URL: databaseUrl,
      SLUICE_SCHEMA: env.schema,
      SLUICE_SECRET: SECRET,
      SLUICE_DRAIN_URL: drain.url,
    })
    try {
      const { POST } = await built.load<{ POST: (r: Request) => Promise<Response> }>(
        'vercel-output/functions/api/sluice.func/index.mjs',
      )
      const res = await POST(
        new Request(`${ORIGIN}/api/jobs/welcome-email`, {
          method: 'POST',
          headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
          body: JSON.stringify({ input: { userId: 'u1', email: 'u1@example.com' } }),
        }),
      )
      expect(res.status).toBe(202)
      expect(handed).toHaveLength(1)
      await handed[0]
      expect(drain.received.map((r) => JSON.parse(r.body).queues)).toEqual([['emails']])
    } finally {
      restore()
      delete globals[holder]
      await drain.close()
    }
  })
})

describe('secrets are checked before deploy', () => {
  /** A build of the Vercel output on Vercel (VERCEL=1) with this environment, into `<dir>`. */
  const vercelBuild = (dir: string, env: Record<string, string>) =>
    build({
      root,
      outDir: join(built.outDir, dir),
      library: false,
      functions: false,
      vercelOutput: join(built.outDir, `${dir}-output`),
      env: { VERCEL: '1', DATABASE_URL: 'postgres://u:p@db.example.com/app', ...env },
      log: () => {},
    })

  test('a Vercel build with a short SLUICE_SECRET fails, naming the rule and the generator', async () => {
    const failed = vercelBuild('short', { SLUICE_SECRET: 'too-short' })
    await expect(failed).rejects.toThrow(
      /SLUICE_SECRET must be at least 16 characters[\s\S]*sluice secret generate/,
    )
  })

  test('a Vercel build without SLUICE_DRAIN_URL, or with a cron and no CRON_SECRET, fails naming both', async () => {
    const failed = vercelBuild('unwoken', { SLUICE_SECRET: 'a'.repeat(32) })
    await expect(failed).rejects.toThrow(
      /CRON_SECRET is not set[\s\S]*SLUICE_DRAIN_URL is not set: .*no job would ever run/,
    )
    expect(
      deployEnvProblems(
        {
          DATABASE_URL: 'postgres://u@h/db',
          SLUICE_SECRET: 'a'.repeat(32),
          SLUICE_DRAIN_URL: 'example.com/api/drain',
        },
        { require: true },
      ),
    ).toEqual([expect.stringMatching(/^SLUICE_DRAIN_URL must be an http:\/\/ or https:\/\/ URL/)])
  })

  test('`npm run secret -- generate` makes a secret that passes; `check` refuses a short one', async () => {
    const tsx = join(root, 'node_modules/tsx/dist/cli.mjs')
    const script = join(root, 'scripts/secret.ts')
    const { stdout } = await run(process.execPath, [tsx, script, 'generate'])
    const secret = stdout.trim()
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(
      deployEnvProblems({ DATABASE_URL: 'postgres://u@h/db', SLUICE_SECRET: secret }, { require: true }),
    ).toEqual([])
    const check = run(process.execPath, [tsx, script, 'check'], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: 'postgres://u@h/db', SLUICE_SECRET: 'short' },
    })
    await expect(check).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('SLUICE_SECRET must be at least 16 characters'),
    })
  })
})
