import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import * as esbuild from 'esbuild'
import { Miniflare } from 'miniflare'
import { bundleOptions, FUNCTIONS } from '../../scripts/build.js'
import { forwardNeonSql, startNeonHttpServer } from '../../test/support/neon-http-server.js'
import { scalar } from '../lib/pg.js'
import { schemaName } from '../lib/sizes.js'
import { summarize } from '../lib/stats.js'
import type { Measurement, Scenario } from '../lib/types.js'
import { openSluice } from '../systems/sluice.js'

const ROOT = new URL('../..', import.meta.url).pathname
const ENTRY = 'functions/vercel/enqueue.ts'
const RUNS = { quick: 3, full: 7 } as const
const SECRET = 'bench-edge-secret-0123456789abcdef'

/**
 * The bundle as Vercel's Edge runtime runs it (a default-exported `(request) => Response` with
 * the environment on `process.env`), served by workerd: this wrapper puts the bindings there.
 */
const WRAPPER = `import enqueue from './enqueue.js'
export default {
  fetch(request, env) {
    globalThis.process ??= { env }
    return enqueue(request)
  },
}
`

/** Who an input file of the bundle belongs to: an npm package, the user's app, or Sluice itself. */
function owner(path: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1]
  if (pkg) return pkg
  if (path.startsWith('examples/')) return "the app's job contracts (examples/)"
  if (path.startsWith('src/') || path.startsWith('functions/')) return 'sluice (src/, functions/)'
  return path
}

/** Bytes of the minified output by owner, from esbuild's metafile. */
function byOwner(metafile: esbuild.Metafile): Map<string, number> {
  const out = new Map<string, number>()
  for (const output of Object.values(metafile.outputs)) {
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      const who = owner(path)
      out.set(who, (out.get(who) ?? 0) + bytesInOutput)
    }
  }
  return out
}

const kib = (b: number): string => `${(b / 1024).toFixed(1)} KiB`

/** What the user brings or would have anyway: the Neon driver, zod and their own schemas. */
const NOT_SLUICE = new Set(['@neondatabase/serverless', 'zod', "the app's job contracts (examples/)"])

export const edge: Scenario = {
  name: 'edge',
  title: 'Edge enqueue: what Sluice adds to the edge bundle, and its cold start in workerd',
  async run(ctx) {
    const fn = FUNCTIONS.find((f) => f.entry === ENTRY)
    if (!fn) throw new Error(`${ENTRY} is not among the build's functions`)
    const base = join(ROOT, 'node_modules/.cache')
    await mkdir(base, { recursive: true })
    const dir = await mkdtemp(join(base, 'sluice-bench-edge-'))
    const out: Measurement[] = []
    const server = await startNeonHttpServer({ connectionString: ctx.url })
    try {
      ctx.log('bundling the edge enqueue function with a metafile')
      const outfile = join(dir, 'enqueue.js')
      const built = await esbuild.build({ ...bundleOptions(ROOT, fn, outfile), metafile: true })
      const owners = [...byOwner(built.metafile).entries()].sort((a, b) => b[1] - a[1])
      const total = owners.reduce((a, [, b]) => a + b, 0)
      const sluiceBytes = owners.filter(([who]) => !NOT_SLUICE.has(who)).reduce((a, [, b]) => a + b, 0)
      out.push({
        id: 'edge.bundle.sluice',
        scenario: 'edge',
        system: 'sluice',
        label: `${ENTRY}: what Sluice adds beyond the Neon driver, zod and the app's schemas`,
        value: Math.round(sluiceBytes / 1024),
        unit: 'KiB',
        display: `${kib(sluiceBytes)} of ${kib(total)} (minified, before gzip)`,
        details: { bytes: sluiceBytes, total },
      })
      for (const [who, bytes] of owners)
        out.push({
          id: `edge.bundle.${who}`,
          scenario: 'edge',
          system: 'sluice',
          label: `  bytes from ${who}${NOT_SLUICE.has(who) ? '' : ' (counted as Sluice)'}`,
          value: bytes,
          unit: 'B',
          display: `${kib(bytes)} (${((bytes / total) * 100).toFixed(1)} %)`,
        })

      // The schema the function enqueues into (the example's contracts; no handler runs here).
      const schema = schemaName('sluice_edge')
      const b = await openSluice(ctx.url, schema)
      await b.close()
      const contents = await readFile(outfile, 'utf8')
      const starts: number[] = []
      const firsts: number[] = []
      const seconds: number[] = []
      for (let i = 0; i < RUNS[ctx.size]; i++) {
        const t0 = performance.now()
        const mf = new Miniflare({
          modules: [
            { type: 'ESModule', path: 'worker.js', contents: WRAPPER },
            { type: 'ESModule', path: 'enqueue.js', contents },
          ],
          compatibilityDate: '2024-09-23',
          bindings: {
            DATABASE_URL: 'postgres://sluice:sluice@db.sluice.test/sluice',
            SLUICE_SCHEMA: schema,
            SLUICE_SECRET: SECRET,
          },
          outboundService: (request) => forwardNeonSql(request, server.url),
        })
        try {
          await mf.ready
          const t1 = performance.now()
          const post = async (): Promise<void> => {
            const res = await mf.dispatchFetch('https://sluice.test/api/enqueue/welcome-email', {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET}` },
              body: JSON.stringify({ input: { userId: `u${i}`, email: `u${i}@example.com` } }),
            })
            if (res.status !== 202)
              throw new Error(`edge enqueue answered ${res.status}: ${await res.text()}`)
            await res.arrayBuffer()
          }
          await post()
          const t2 = performance.now()
          await post()
          const t3 = performance.now()
          starts.push(t1 - t0)
          firsts.push(t2 - t0)
          seconds.push(t3 - t2)
        } finally {
          await mf.dispose()
        }
      }
      const enqueued = await scalar(ctx.admin, `SELECT count(*) FROM "${schema}".jobs`)
      if (enqueued !== RUNS[ctx.size] * 2)
        throw new Error(`edge: ${enqueued} jobs enqueued, expected ${RUNS[ctx.size] * 2}`)
      const first = summarize(firsts)
      const start = summarize(starts)
      const second = summarize(seconds)
      const afterReady = summarize(firsts.map((f, i) => f - starts[i]!))
      out.push({
        id: 'edge.cold-start',
        scenario: 'edge',
        system: 'sluice',
        label: `${ENTRY} in workerd (Miniflare): new Miniflare → first enqueue answered`,
        value: first.p50,
        unit: 'ms',
        display: `p50 ${first.p50.toFixed(0)} ms (workerd up with the script ${start.p50.toFixed(0)} ms, then first answer ${afterReady.p50.toFixed(0)} ms) · next request p50 ${second.p50.toFixed(1)} ms`,
        details: {
          firstResponseMs: first,
          readyMs: start,
          firstAfterReadyMs: afterReady,
          secondRequestMs: second,
        },
      })
      return {
        measurements: out,
        notes: [
          'Bytes: esbuild metafile of the build’s own options for the edge function (minified, before gzip), by the package each input file belongs to; Sluice = everything but the Neon driver, zod and the app’s contracts (hono included: Sluice brings it).',
          `Cold start: ${RUNS[ctx.size]} runs, each a new Miniflare (a workerd process) given the bundle; timed from the constructor to the first 202 of a real enqueue (Neon HTTP driver → local SQL-over-HTTP endpoint → PostgreSQL). workerd's own process start is inside that figure, so a platform's isolate start is smaller.`,
        ],
      }
    } finally {
      await server.close()
      await rm(dir, { recursive: true, force: true })
    }
  },
}
