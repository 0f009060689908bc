/**
 * `npm run build`: the library to dist/ (ESM, one file per source file, dependencies
 * external, .d.ts from tsc) and one minified, self-contained bundle per deployable
 * function to dist/functions/. Prints the bundle sizes. Fails when the edge bundle
 * imports a Node built-in or when any of our own code would read files at run time.
 *
 *   npm run build                   library + functions
 *   npm run build -- --vercel       also .vercel/output (Vercel's Build Output API)
 *   npm run build -- --functions    functions only
 *   npm run build -- --library      library only (npm pack runs this as prepack)
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { builtinModules } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { promisify } from 'node:util'
import { gzipSync } from 'node:zlib'
import * as esbuild from 'esbuild'
import { deployEnvProblems } from '../src/platforms/secrets.js'

export type FunctionTarget = 'node' | 'edge'

export interface FunctionBundle {
  /** Entry point, relative to the project root. */
  entry: string
  /** Output file, relative to `<outDir>/functions`. */
  out: string
  target: FunctionTarget
  /** Where the bundle goes in Vercel's Build Output API, and with what limits. */
  vercel?: { path: string; maxDurationS?: number }
  /**
   * Bundle Sluice's migrations (about 160 KiB of SQL)? Default true. The drain and maintenance
   * functions leave them out: the deploy runs `sluice migrate`, and their migrate() says so.
   */
  migrations?: boolean
}

/** Every deployable function. serverless.yml and vercel.json point at these outputs. */
export const FUNCTIONS: readonly FunctionBundle[] = [
  { entry: 'functions/aws/drain.ts', out: 'aws/drain.mjs', target: 'node', migrations: false },
  { entry: 'functions/aws/maintain.ts', out: 'aws/maintain.mjs', target: 'node', migrations: false },
  { entry: 'functions/aws/api.ts', out: 'aws/api.mjs', target: 'node' },
  {
    entry: 'functions/vercel/api.ts',
    out: 'vercel/api.mjs',
    target: 'node',
    vercel: { path: 'api/sluice', maxDurationS: 60 },
  },
  {
    entry: 'functions/vercel/enqueue.ts',
    out: 'vercel/enqueue.js',
    target: 'edge',
    vercel: { path: 'api/enqueue' },
  },
  { entry: 'functions/cloudflare/worker.ts', out: 'cloudflare/worker.js', target: 'edge' },
]

/**
 * The Node.js runtime of every Node function: the current LTS line on both platforms
 * (Lambda `nodejs24.x` in serverless.yml, Vercel `nodejs24.x` here). package.json `engines`
 * names the LTS lines the code runs on, so that Vercel's build picks the same one.
 */
export const NODE_RUNTIME = 'nodejs24.x'

/** Source-mapped stack traces in production (the bundles ship their .map files). */
export const NODE_OPTIONS = '--enable-source-maps'

/** Library entries: package.json `exports` names → source files. */
export const ENTRIES: Readonly<Record<string, string>> = {
  '.': 'src/index.ts',
  './edge': 'src/edge.ts',
  './aws-lambda': 'src/platforms/aws-lambda.ts',
  './vercel': 'src/platforms/vercel.ts',
}

export interface BuildOptions {
  /** Project root. Default: the directory above scripts/. */
  root?: string
  /** Default `<root>/dist`. */
  outDir?: string
  /** Build the library (dist/*.js). Default true. */
  library?: boolean
  /** Emit .d.ts with tsc (with the library). Default true. */
  declarations?: boolean
  /** Bundle the deployable functions: all of them (default), none, or these entries only. */
  functions?: boolean | readonly string[]
  /** The function table. Default FUNCTIONS. */
  functionList?: readonly FunctionBundle[]
  /** Also write Vercel's Build Output API tree here (usually `<root>/.vercel/output`). Default off. */
  vercelOutput?: string | false
  /** The deployment's environment, checked when writing Vercel's output. Default process.env. */
  env?: Record<string, string | undefined>
  /** Where progress and the size table go. Default console.log. */
  log?: (line: string) => void
}

export interface BundleReport {
  entry: string
  file: string
  target: FunctionTarget
  bytes: number
  gzipBytes: number
}

export interface BuildResult {
  outDir: string
  /** Library files written (relative to outDir). */
  library: string[]
  bundles: BundleReport[]
}

export class BuildError extends Error {}

const NODE_BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))

export function isNodeBuiltin(path: string): boolean {
  return path.startsWith('node:') || NODE_BUILTINS.has(path) || NODE_BUILTINS.has(path.split('/')[0]!)
}

/** Imports of Node built-ins in a metafile, as `input → import`. */
export function nodeImports(metafile: esbuild.Metafile): string[] {
  const found: string[] = []
  for (const [input, info] of Object.entries(metafile.inputs)) {
    for (const imported of info.imports) {
      if (imported.external && isNodeBuiltin(imported.path)) found.push(`${input} → ${imported.path}`)
    }
  }
  return found
}

const FS_MODULES = new Set(['fs', 'fs/promises', 'node:fs', 'node:fs/promises'])

/** Our own inputs (not dependencies) that import the file system: they would read files at run time. */
export function fileReads(metafile: esbuild.Metafile): string[] {
  const found: string[] = []
  for (const [input, info] of Object.entries(metafile.inputs)) {
    if (input.includes('node_modules/')) continue
    for (const imported of info.imports)
      if (FS_MODULES.has(imported.path)) found.push(`${input} → ${imported.path}`)
  }
  return found
}

// Bundled CommonJS dependencies (pg) call require() for built-ins; ESM output needs a real one.
const NODE_BANNER =
  "import { createRequire as __sluiceCreateRequire } from 'node:module';" +
  'const require = __sluiceCreateRequire(import.meta.url);'

/** Registers the bundled pg with the library's optional-peer loader (see src/optional.ts). */
export const BUNDLED_PG = 'src/db/bundle-pg.ts'

/**
 * Replaces the generated migration modules (src/migrate/*.generated.ts, or their dist/ .js) with
 * `null`, which migrate() refuses with a ConfigError naming `sluice migrate`.
 */
export const WITHOUT_MIGRATIONS: esbuild.Plugin = {
  name: 'sluice-without-migrations',
  setup(b) {
    b.onLoad({ filter: /[\\/]migrate[\\/](migrations|functions)\.generated\.[jt]s$/ }, (args) => {
      const name = args.path.includes('functions.generated') ? 'functions' : 'migrations'
      return { contents: `export const ${name} = null\n`, loader: 'js' }
    })
  },
}

export function bundleOptions(root: string, fn: FunctionBundle, outfile: string): esbuild.BuildOptions {
  const common: esbuild.BuildOptions = {
    absWorkingDir: root,
    entryPoints: [join(root, fn.entry)],
    outfile,
    bundle: true,
    minify: true,
    // Errors keep their class names (errorType "ConfigError", not "N"), and each bundle ships a
    // source map beside it (without the sources: only positions are needed for stack traces).
    keepNames: true,
    sourcemap: 'linked',
    sourcesContent: false,
    format: 'esm',
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
  }
  if (fn.target === 'node') {
    return {
      ...common,
      ...(fn.migrations === false ? { plugins: [WITHOUT_MIGRATIONS] } : {}),
      platform: 'node',
      target: 'node20',
      banner: { js: NODE_BANNER },
      // The library imports its drivers by a name bundlers leave alone (src/optional.ts); a function
      // ships no node_modules, so this file hands it the bundled pg (evaluated at the first connect).
      inject: [join(root, BUNDLED_PG)],
      // Loaded on demand for `pglite:` URLs and by pg's optional native binding: never on a platform.
      external: ['@electric-sql/pglite', 'pg-native'],
    }
  }
  return {
    ...common,
    platform: 'browser',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    // Kept external so that the check below can name whoever imports one, instead of a resolve error.
    external: [...NODE_BUILTINS],
  }
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name))
}

/**
 * Checks what the unbundled output cannot show: bundled from each package export, our own
 * code never imports the file system, and `sluice/edge` (dependencies included) never
 * imports a Node built-in.
 */
async function checkLibrary(root: string): Promise<void> {
  // The CLI (src/cli) reads config files and is not a library entry: it is left out of this check.
  const entries = Object.values(ENTRIES).filter((entry) => existsSync(join(root, entry)))
  const node = await esbuild.build({
    absWorkingDir: root,
    entryPoints: entries,
    outdir: 'out',
    bundle: true,
    write: false,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    metafile: true,
    logLevel: 'silent',
  })
  const reads = fileReads(node.metafile)
  if (reads.length > 0) throw new BuildError(`The library reads files at run time:\n  ${reads.join('\n  ')}`)
  const edge = await esbuild.build({
    ...bundleOptions(
      root,
      { entry: ENTRIES['./edge']!, out: 'edge.js', target: 'edge' },
      join(root, 'out.js'),
    ),
    write: false,
  })
  const builtins = nodeImports(edge.metafile!)
  if (builtins.length > 0)
    throw new BuildError(`sluice/edge imports Node built-ins:\n  ${builtins.join('\n  ')}`)
}

async function buildLibrary(root: string, outDir: string, declarations: boolean): Promise<string[]> {
  const src = join(root, 'src')
  const files = await sourceFiles(src)
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: files,
    outdir: outDir,
    outbase: src,
    bundle: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    metafile: true,
    logLevel: 'silent',
  })
  await checkLibrary(root)
  const written = Object.keys(result.metafile.outputs).map((file) => relative(outDir, join(root, file)))
  const cli = join(outDir, 'cli/main.js')
  if (existsSync(cli)) await chmod(cli, 0o755)
  if (declarations) {
    const tsc = join(root, 'node_modules/typescript/bin/tsc')
    try {
      await promisify(execFile)(
        process.execPath,
        [tsc, '-p', join(root, 'tsconfig.build.json'), '--emitDeclarationOnly', '--outDir', outDir],
        { cwd: root },
      )
    } catch (error) {
      const output = (error as { stdout?: string }).stdout ?? String(error)
      throw new BuildError(`tsc failed to emit declarations:\n${output}`)
    }
  }
  return written.sort()
}

async function buildFunction(root: string, outDir: string, fn: FunctionBundle): Promise<BundleReport> {
  if (!existsSync(join(root, fn.entry))) throw new BuildError(`Missing function entry ${fn.entry}`)
  const outfile = join(outDir, 'functions', fn.out)
  let result: esbuild.BuildResult & { metafile: esbuild.Metafile }
  try {
    result = (await esbuild.build(bundleOptions(root, fn, outfile))) as typeof result
  } catch (error) {
    const errors = (error as esbuild.BuildFailure).errors ?? []
    const detail = errors
      .map((e) => `${e.location?.file ?? ''}:${e.location?.line ?? ''} ${e.text}`)
      .join('\n  ')
    throw new BuildError(`Bundling ${fn.entry} failed:\n  ${detail || String(error)}`)
  }
  if (fn.target === 'edge') {
    const builtins = nodeImports(result.metafile)
    if (builtins.length > 0) {
      throw new BuildError(
        `The edge bundle ${fn.entry} imports Node built-ins, which edge runtimes do not have:\n  ${builtins.join('\n  ')}`,
      )
    }
  }
  const reads = fileReads(result.metafile)
  if (reads.length > 0)
    throw new BuildError(`${fn.entry} would read files at run time:\n  ${reads.join('\n  ')}`)
  const outputs = Object.keys(result.metafile.outputs).filter((file) => !file.endsWith('.map'))
  if (outputs.length !== 1)
    throw new BuildError(`${fn.entry} produced ${outputs.length} files; expected one (and its source map).`)
  const code = await readFile(outfile)
  return {
    entry: fn.entry,
    file: relative(outDir, outfile),
    target: fn.target,
    bytes: code.byteLength,
    gzipBytes: gzipSync(code, { level: 9 }).byteLength,
  }
}

/**
 * Vercel's Build Output API (v3): one `.func` directory per function (bundle and source map),
 * and routes sending every other /api/* path to the Node function. No crons: `vercel build`
 * adds vercel.json's crons to the output's own, so writing them here would schedule each twice.
 */
async function writeVercelOutput(
  outDir: string,
  target: string,
  functions: readonly FunctionBundle[],
): Promise<void> {
  await rm(target, { recursive: true, force: true })
  const routes: Record<string, unknown>[] = [{ handle: 'filesystem' }]
  for (const fn of functions) {
    if (!fn.vercel) continue
    const dir = join(target, 'functions', `${fn.vercel.path}.func`)
    await mkdir(dir, { recursive: true })
    const file = fn.target === 'edge' ? 'index.js' : 'index.mjs'
    await copyFile(join(outDir, 'functions', fn.out), join(dir, file))
    // The bundle names its map by its own file name (`//# sourceMappingURL=api.mjs.map`).
    const map = join(outDir, 'functions', `${fn.out}.map`)
    const mapName = `${fn.out.split('/').pop()}.map`
    if (existsSync(map)) await copyFile(map, join(dir, mapName))
    const maxDurationS = fn.vercel.maxDurationS
    const config =
      fn.target === 'edge'
        ? { runtime: 'edge', entrypoint: file }
        : {
            runtime: NODE_RUNTIME,
            handler: file,
            launcherType: 'Nodejs',
            shouldAddHelpers: false,
            supportsResponseStreaming: true,
            ...(maxDurationS ? { maxDuration: maxDurationS } : {}),
            // The drain's time budget follows the function's limit.
            environment: {
              NODE_OPTIONS,
              ...(maxDurationS ? { SLUICE_MAX_DURATION_MS: String(maxDurationS * 1000) } : {}),
            },
          }
    await writeFile(join(dir, '.vc-config.json'), `${JSON.stringify(config, null, 2)}\n`)
  }
  // The edge function takes the paths below its own (/api/enqueue/:name); everything else under
  // /api goes to the Node function (/api/drain, /api/maintain, /api/jobs/:name …). A rewrite
  // keeps the request's URL, so the app routes on the original path.
  for (const fn of functions) {
    if (fn.vercel && fn.target === 'edge')
      routes.push({ src: `^/${fn.vercel.path}/.+$`, dest: `/${fn.vercel.path}` })
  }
  const api = functions.find((fn) => fn.target === 'node' && fn.vercel)
  if (api?.vercel) routes.push({ src: '^/api(?:/.*)?$', dest: `/${api.vercel.path}` })
  const config = { version: 3, routes }
  await writeFile(join(target, 'config.json'), `${JSON.stringify(config, null, 2)}\n`)
}

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`

export function sizeTable(bundles: readonly BundleReport[]): string {
  const rows = [
    ['bundle', 'target', 'raw', 'gzip'],
    ...bundles.map((b) => [b.file, b.target, kib(b.bytes), kib(b.gzipBytes)]),
  ]
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows
    .map(
      (row, n) =>
        row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ') +
        (n === 0 ? `\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : ''),
    )
    .join('\n')
}

export async function build(options: BuildOptions = {}): Promise<BuildResult> {
  const root = options.root ?? join(dirname(new URL(import.meta.url).pathname), '..')
  const outDir = options.outDir ?? join(root, 'dist')
  const log = options.log ?? ((line: string) => console.log(line))
  const result: BuildResult = { outDir, library: [], bundles: [] }
  if (options.library !== false) {
    await rm(outDir, { recursive: true, force: true })
    result.library = await buildLibrary(root, outDir, options.declarations !== false)
    log(`library: ${result.library.length} files in ${relative(root, outDir) || outDir}`)
  }
  const list = options.functionList ?? FUNCTIONS
  if (options.functions !== false) {
    const only = Array.isArray(options.functions) ? new Set(options.functions) : undefined
    const chosen = only ? list.filter((fn) => only.has(fn.entry)) : list
    await rm(join(outDir, 'functions'), { recursive: true, force: true })
    result.bundles = await Promise.all(chosen.map((fn) => buildFunction(root, outDir, fn)))
    log(sizeTable(result.bundles))
  }
  if (options.vercelOutput) {
    // On Vercel the build sees the deployment's environment: a secret every cold start would
    // refuse fails the deploy here instead. (VERCEL=1 there: the secrets must be set too.)
    const env = options.env ?? process.env
    const problems = deployEnvProblems(env, { require: env.VERCEL === '1' })
    if (problems.length > 0) throw new BuildError(`the deployment's environment:\n  ${problems.join('\n  ')}`)
    await writeVercelOutput(outDir, options.vercelOutput, list)
    log(`vercel: Build Output API in ${relative(root, options.vercelOutput)}`)
  }
  return result
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const args = new Set(process.argv.slice(2))
  const root = join(dirname(new URL(import.meta.url).pathname), '..')
  try {
    await build({
      root,
      library: !args.has('--functions'),
      functions: !args.has('--library'),
      vercelOutput: args.has('--vercel') ? join(root, '.vercel/output') : false,
    })
  } catch (error) {
    console.error(error instanceof BuildError ? `build failed: ${error.message}` : error)
    process.exit(1)
  }
}
