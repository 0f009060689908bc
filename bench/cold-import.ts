/**
 * Two builds of the functions, side by side in one run: each Node bundle's size and how long a
 * fresh Node process takes to import it, with and without `--enable-source-maps` (which the
 * deployed functions set). Imports alternate between the two builds, so load on the machine
 * falls on both alike. The database is never contacted.
 *
 *   git worktree add /tmp/before <ref> && (cd /tmp/before && npm ci && npx tsx scripts/build.ts --functions)
 *   npm run build -- --functions
 *   npx tsx bench/cold-import.ts --before /tmp/before/dist/functions --after dist/functions [--imports 21]
 *
 * Bundles are paired by path (functions/aws/drain.mjs with functions/aws/drain.mjs); `--pair
 * old=new` adds a pair under different names. `--floors` also bundles each dependency every Node
 * function carries (pg with Sluice's registration, zod/mini with one schema, hono with the Lambda
 * adapter; zod classic too, for comparison) alone, with the same preset, and times their
 * imports: what no change to Sluice's own code can go below.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { percentile } from './lib/stats.js'

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string', default: 'dist/functions' },
    imports: { type: 'string', default: '21' },
    pair: { type: 'string', multiple: true, default: [] },
    floors: { type: 'boolean', default: false },
  },
})
if (!values.before) throw new Error('--before <dir of built functions> is required')
const before = resolve(values.before)
const after = resolve(values.after)
const imports = Number(values.imports)

async function nodeBundles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.mjs'))
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort()
}

const ENV = {
  ...process.env,
  DATABASE_URL: 'postgres://bench@127.0.0.1:1/none',
  SLUICE_SECRET: 'bench-secret-0123456789abcdef',
  CRON_SECRET: 'bench-cron-secret-0123456789',
}

function coldImport(file: string, flags: string[]): number {
  const run = spawnSync(
    process.execPath,
    [
      ...flags,
      '--input-type=module',
      '-e',
      `const t = performance.now(); await import(${JSON.stringify(`file://${file}`)}); console.log(performance.now() - t); process.exit(0)`,
    ],
    { encoding: 'utf8', env: ENV },
  )
  const ms = Number(run.stdout.trim().split('\n').pop())
  if (run.status !== 0 || !Number.isFinite(ms))
    throw new Error(`importing ${file} failed: ${run.stderr.trim().split('\n').slice(0, 3).join(' ')}`)
  return ms
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`
const size = (file: string) => ({ raw: statSync(file).size, gzip: gzipSync(readFileSync(file)).length })

const pairs: [string, string][] = []
const afterFiles = new Set(await nodeBundles(after))
for (const file of await nodeBundles(before)) if (afterFiles.has(file)) pairs.push([file, file])
for (const p of values.pair) {
  const [old, now] = p.split('=')
  if (!old || !now) throw new Error(`--pair old=new, not "${p}"`)
  pairs.push([old, now])
}

console.log(`node ${process.version}, ${imports} fresh processes per bundle and setting, alternating`)
console.log(`before: ${before}\nafter:  ${after}\n`)
console.log('| bundle | before | after | size | cold import p50 | with --enable-source-maps |')
console.log('| --- | --- | --- | --- | --- | --- |')
for (const [old, now] of pairs) {
  const a = join(before, old)
  const b = join(after, now)
  if (!existsSync(a) || !existsSync(b)) continue
  const times = { plain: [[], []] as number[][], maps: [[], []] as number[][] }
  for (let i = 0; i < imports; i++) {
    for (const [setting, flags] of [
      ['plain', []],
      ['maps', ['--enable-source-maps']],
    ] as const) {
      times[setting][0]!.push(coldImport(a, [...flags]))
      times[setting][1]!.push(coldImport(b, [...flags]))
    }
  }
  const p50 = (xs: number[]) => percentile(xs, 50)
  const cell = (setting: 'plain' | 'maps') => {
    const [x, y] = times[setting].map(p50) as [number, number]
    return `${x.toFixed(1)} → ${y.toFixed(1)} ms (**${(y / x).toFixed(2)}×**)`
  }
  const [sa, sb] = [size(a), size(b)]
  console.log(
    `| ${now} | ${kib(sa.raw)} (${kib(sa.gzip)} gzip) | ${kib(sb.raw)} (${kib(sb.gzip)} gzip) | ${(sb.raw / sa.raw).toFixed(2)}× | ${cell('plain')} | ${cell('maps')} |`,
  )
}

if (values.floors) {
  const esbuild = await import('esbuild')
  const { esbuildPreset, pgProvider } = await import('../src/build/index.js')
  const dir = await mkdtemp(join(resolve('node_modules/.cache'), 'sluice-floors-'))
  const entries: Record<string, string> = {
    'pg (registered as Sluice registers it)': 'export {}\n',
    'zod classic (one object schema)':
      "import * as z from 'zod'\nexport const s = z.object({ a: z.string() }).strict()\n",
    'zod/mini (one object schema, English messages)':
      "import * as z from 'zod/mini'\nimport en from 'zod/v4/locales/en.js'\nz.config(en())\nexport const s = z.strictObject({ a: z.string() })\n",
    'hono (one route, Lambda adapter)':
      "import { Hono } from 'hono'\nimport { handle } from 'hono/aws-lambda'\nconst app = new Hono()\napp.post('/drain', (c) => c.json({}))\nexport const handler = handle(app)\n",
    'pg + zod/mini + hono':
      "import * as z from 'zod/mini'\nimport en from 'zod/v4/locales/en.js'\nz.config(en())\nimport { Hono } from 'hono'\nimport { handle } from 'hono/aws-lambda'\nexport const s = z.strictObject({ a: z.string() })\nconst app = new Hono()\napp.post('/drain', (c) => c.json({}))\nexport const handler = handle(app)\n",
  }
  try {
    console.log('\n| what alone | size | cold import p50 |')
    console.log('| --- | --- | --- |')
    let i = 0
    for (const [label, source] of Object.entries(entries)) {
      const entry = join(dir, `floor${i}.ts`)
      const outfile = join(dir, `floor${i++}.mjs`)
      await writeFile(entry, source)
      const pg = label.startsWith('pg')
      await esbuild.build({
        ...(esbuildPreset('node', pg ? { inject: [pgProvider()] } : {}) as object),
        entryPoints: [entry],
        outfile,
        nodePaths: [resolve('node_modules')],
      })
      const times = Array.from({ length: imports }, () => coldImport(outfile, []))
      console.log(`| ${label} | ${kib(statSync(outfile).size)} | ${percentile(times, 50).toFixed(1)} ms |`)
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
