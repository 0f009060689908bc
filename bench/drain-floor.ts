/**
 * How small the drain function's bundle can get: bundles `functions/aws/drain.ts` as `sluice
 * build` does (same preset, same leave-outs), then again with more and more of what a drain's
 * request never runs replaced by empty stand-ins, and prints the size at each step and what the
 * smallest one is made of. The stand-ins keep each module's exported names and nothing else,
 * so the bundles are measured, never run: the steps are what a leaner drain would have to give
 * up, not a way to build one.
 *
 *   npx tsx bench/drain-floor.ts [--entry functions/aws/drain.ts]
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import * as esbuild from 'esbuild'
import { leaveOut } from '../src/build/build.js'
import { discoverFunctions } from '../src/build/functions.js'
import { esbuildPreset, pgProvider } from '../src/build/preset.js'

const { values } = parseArgs({ options: { entry: { type: 'string', default: 'functions/aws/drain.ts' } } })
const root = resolve('.')
const fn = (await discoverFunctions(root)).find((f) => f.entry === values.entry)
if (!fn) throw new Error(`${values.entry} is not a function entry of this project`)

/** Cumulative steps: each leaves out its modules and every earlier step's. */
const STEPS: { what: string; modules: string[] }[] = [
  {
    what: 'inspect (every read of `sluice.inspect`, the overview, stats, metrics)',
    modules: ['src/inspect.ts'],
  },
  { what: 'dead letters: list, replay, discard', modules: ['src/sql/dead-letters.ts'] },
  {
    what: 'maintenance tasks (built by createSluice, run by maintain())',
    modules: ['src/maintain/maintain.ts', 'src/controls/tasks.ts', 'src/events/tasks.ts', 'src/wake/task.ts'],
  },
  {
    what: 'controls (pause, cancel, retry, reschedule, batches, recurring runs)',
    modules: ['src/controls/api.ts'],
  },
  { what: 'migrate() (its SQL is already left out)', modules: ['src/migrate/run.ts'] },
  {
    what: 'OpenTelemetry spans (the API itself is loaded only when installed)',
    modules: ['src/tracing/operations.ts'],
  },
  { what: "pg's reader of ~/.pgpass", modules: ['node_modules/pgpass/lib/index.js'] },
]

/** A module of the same exported names, each an empty function. */
async function standIn(path: string): Promise<string> {
  if (path.includes('node_modules/')) return 'module.exports = function () {}\n'
  const names = Object.keys(await import(pathToFileURL(join(root, path)).href))
  return `const left = () => {}\n${names.map((n) => `export const ${n} = left`).join('\n')}\n`
}

const out = await mkdtemp(join(tmpdir(), 'drain-floor-'))
type Built = { bytes: number; inputs: Record<string, number> }
async function build(stubbed: string[], keepNames = true): Promise<Built> {
  const stands = new Map(
    await Promise.all(stubbed.map(async (p) => [join(root, p), await standIn(p)] as const)),
  )
  const result = await esbuild.build({
    ...esbuildPreset(fn!.target, { inject: [pgProvider()] }),
    keepNames,
    plugins: [
      leaveOut(fn!) as esbuild.Plugin,
      {
        name: 'stand-ins',
        setup(b) {
          b.onLoad({ filter: /\.(ts|js)$/ }, (args) => {
            const contents = stands.get(args.path)
            return contents === undefined ? undefined : { contents, loader: 'js' }
          })
        },
      },
    ],
    absWorkingDir: root,
    entryPoints: [join(root, fn!.entry)],
    outfile: join(out, 'drain.mjs'),
  })
  const [, output] = Object.entries(result.metafile.outputs).find(([file]) => !file.endsWith('.map'))!
  return {
    bytes: output.bytes,
    inputs: Object.fromEntries(Object.entries(output.inputs).map(([p, v]) => [p, v.bytesInOutput])),
  }
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`
try {
  const rows: string[] = []
  let stubbed: string[] = []
  let last = await build([])
  rows.push(`| as \`sluice build\` bundles it | ${kib(last.bytes)} | |`)
  for (const step of STEPS) {
    stubbed = [...stubbed, ...step.modules]
    const next = await build(stubbed)
    rows.push(`| and without ${step.what} | ${kib(next.bytes)} | −${kib(last.bytes - next.bytes)} |`)
    last = next
  }
  const plain = await build(stubbed, false)
  console.log(`${values.entry}, leaving out more and more of what a drain's request never runs:\n`)
  console.log('| bundle | raw | step |\n| --- | --- | --- |')
  for (const row of rows) console.log(row)
  console.log(
    `\nThe last, without keepNames (class and function names kept for errors): ${kib(plain.bytes)}.`,
  )
  const groups = new Map<string, number>()
  for (const [path, bytes] of Object.entries(last.inputs)) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1]
    const group =
      pkg?.startsWith('pg') || pkg?.startsWith('postgres-') || pkg === 'split2' ? 'pg and its modules' : pkg
    const key =
      group ?? (relative(root, resolve(root, path)).startsWith('src/') ? "Sluice's own code" : 'the app')
    groups.set(key, (groups.get(key) ?? 0) + bytes)
  }
  console.log('\nWhat the last one is made of:\n\n| part | raw |\n| --- | --- |')
  for (const [group, bytes] of [...groups].sort((a, b) => b[1] - a[1]))
    if (bytes >= 512) console.log(`| ${group} | ${kib(bytes)} |`)
} finally {
  await rm(out, { recursive: true, force: true })
}
