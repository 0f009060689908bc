/**
 * `npm run build`: the library to dist/ (ESM, one file per source file, dependencies
 * external, .d.ts from tsc), then the example's functions through the same public path a
 * user's project takes (`sluice build`, src/build): one minified, self-contained bundle per
 * entry of functions/ to dist/functions/, checked, with the size table.
 *
 *   npm run build                   library + functions
 *   npm run build -- --vercel       also .vercel/output (Vercel's Build Output API)
 *   npm run build -- --functions    functions only
 *   npm run build -- --functions --docs   and rewrite docs/deploy.md's size table
 *   npm run build -- --library      library only (npm pack runs this as prepack)
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import * as esbuild from 'esbuild'
import {
  BuildError,
  type BundleReport,
  buildFunctions,
  discoverFunctions,
  esbuildPreset,
  type FunctionBundle,
  fileReads,
  nodeImports,
  pgProvider,
  sizeTable,
} from '../src/build/index.js'

export {
  BuildError,
  type BundleReport,
  type FunctionBundle,
  type FunctionTarget,
  isNodeBuiltin,
  NODE_OPTIONS,
  NODE_RUNTIME,
  nodeImports,
  sizeTable,
} from '../src/build/index.js'

const ROOT = join(import.meta.dirname, '..')

/** Every deployable function, as `sluice build` finds them in functions/ (serverless.yml and vercel.json point at their outputs). */
export const FUNCTIONS: readonly FunctionBundle[] = await discoverFunctions(ROOT)

/** Library entries: package.json `exports` names → source files. */
export const ENTRIES: Readonly<Record<string, string>> = {
  '.': 'src/index.ts',
  './edge': 'src/edge.ts',
  './aws-lambda': 'src/platforms/aws-lambda.ts',
  './vercel': 'src/platforms/vercel.ts',
  './build': 'src/build/index.ts',
}

/** Entries that run at build or command time, not in a function: they may read files. */
const TOOL_ENTRIES = new Set(['./build'])

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

export interface BuildResult {
  outDir: string
  /** Library files written (relative to outDir). */
  library: string[]
  bundles: BundleReport[]
}

/** esbuild's options for one of the functions (the public preset, with this repository's paths). */
export function bundleOptions(root: string, fn: FunctionBundle, outfile: string): esbuild.BuildOptions {
  return {
    ...esbuildPreset(fn.target, fn.target === 'node' ? { inject: [pgProvider()] } : {}),
    absWorkingDir: root,
    entryPoints: [join(root, fn.entry)],
    outfile,
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
  // The CLI (src/cli) and the build (src/build) read files by design: they are left out of this check.
  const entries = Object.entries(ENTRIES)
    .filter(([name, entry]) => !TOOL_ENTRIES.has(name) && existsSync(join(root, entry)))
    .map(([, entry]) => entry)
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

/** The size table in docs/deploy.md sits between these lines. */
export const DOCS_TABLE = {
  file: 'docs/deploy.md',
  start: '<!-- sizes: start (npm run build -- --functions --docs) -->',
  end: '<!-- sizes: end -->',
}

/** docs/deploy.md's text with `table` as its size table. */
export function withSizeTable(doc: string, table: string): string {
  const from = doc.indexOf(DOCS_TABLE.start)
  const to = doc.indexOf(DOCS_TABLE.end)
  if (from < 0 || to < from) throw new BuildError(`${DOCS_TABLE.file} has no size table markers.`)
  return `${doc.slice(0, from + DOCS_TABLE.start.length)}\n\n\`\`\`\n${table}\n\`\`\`\n\n${doc.slice(to)}`
}

export async function build(options: BuildOptions = {}): Promise<BuildResult> {
  const root = options.root ?? ROOT
  const outDir = options.outDir ?? join(root, 'dist')
  const log = options.log ?? ((line: string) => console.log(line))
  const result: BuildResult = { outDir, library: [], bundles: [] }
  if (options.library !== false) {
    await rm(outDir, { recursive: true, force: true })
    result.library = await buildLibrary(root, outDir, options.declarations !== false)
    log(`library: ${result.library.length} files in ${relative(root, outDir) || outDir}`)
  }
  const functions = options.functionList ?? FUNCTIONS
  if (options.functions !== false || options.vercelOutput) {
    const built = await buildFunctions({
      root,
      outDir,
      functions,
      ...(Array.isArray(options.functions) ? { only: options.functions } : {}),
      vercelOutput: options.vercelOutput ?? false,
      ...(options.env ? { env: options.env } : {}),
      log: options.functions === false ? () => {} : log,
    })
    result.bundles = options.functions === false ? [] : built.bundles
  }
  return result
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const args = new Set(process.argv.slice(2))
  try {
    const result = await build({
      root: ROOT,
      library: !args.has('--functions'),
      functions: !args.has('--library'),
      vercelOutput: args.has('--vercel') ? join(ROOT, '.vercel/output') : false,
    })
    if (args.has('--docs')) {
      const path = join(ROOT, DOCS_TABLE.file)
      await writeFile(path, withSizeTable(await readFile(path, 'utf8'), sizeTable(result.bundles)))
      console.log(`wrote the size table in ${DOCS_TABLE.file}`)
    }
  } catch (error) {
    console.error(error instanceof BuildError ? `build failed: ${error.message}` : error)
    process.exit(1)
  }
}
