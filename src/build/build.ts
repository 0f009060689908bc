/**
 * `sluice build`: one minified, self-contained ESM bundle (and its source map) per function of
 * the project, with the preset's options, checked before it can ship: an edge bundle must not
 * import a Node built-in, and the project's own code must not read files at run time. Prints
 * the size table; optionally writes Vercel's Build Output API tree.
 *
 * esbuild is an optional peer dependency of sluice: only this command needs it
 * (`npm install --save-dev esbuild`).
 */
import { existsSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { ConfigError } from '../errors.js'
import { deployEnvProblems, secretAdvice } from '../platforms/secrets.js'
import { BuildError } from './errors.js'
import { discoverFunctions, type FunctionBundle } from './functions.js'
import { isInstalled } from './installed.js'
import {
  esbuildPreset,
  fileReads,
  isNodeBuiltin,
  type MetafileLike,
  nodeImports,
  pgProvider,
} from './preset.js'
import { type BundleReport, sizeTable } from './sizes.js'
import { writeVercelOutput } from './vercel-output.js'

export interface BuildFunctionsOptions {
  /** The project's root. Default the working directory. */
  root?: string
  /** Bundles go to `<outDir>/functions/`. Default `<root>/dist`. */
  outDir?: string
  /** The function table. Default: discovered from `<root>/functions` (see discoverFunctions). */
  functions?: readonly FunctionBundle[]
  /** Build only these entries (relative to root). */
  only?: readonly string[]
  /** More packages to leave out of every bundle. */
  external?: readonly string[]
  /** Also write Vercel's Build Output API tree here (usually `<root>/.vercel/output`). */
  vercelOutput?: string | false
  /** The deployment's environment, checked when writing Vercel's output. Default process.env. */
  env?: Record<string, string | undefined>
  /** Where the size table goes. Default console.log. */
  log?: (line: string) => void
}

export interface FunctionsBuild {
  outDir: string
  functions: FunctionBundle[]
  bundles: BundleReport[]
}

interface Esbuild {
  build(options: Record<string, unknown>): Promise<{ metafile?: MetafileLike & { outputs: object } }>
}

interface PluginBuild {
  onLoad(
    o: { filter: RegExp },
    f: (a: { path: string }) => { contents: string; loader: 'js'; resolveDir?: string } | undefined,
  ): void
}

/** A file of this package (src/ when run from source, dist/ when installed), by its path from here without extension. */
function ownFile(path: string): string {
  return fileURLToPath(new URL(`${path}.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url))
}

/**
 * What a function's bundle leaves out, as an esbuild plugin:
 * - migrations (`fn.migrations === false`): the generated migration modules become `null`, which
 *   migrate() refuses with a ConfigError naming `sluice migrate`;
 * - schedules (`fn.schedules === false`): Sluice's cron module becomes build/drain-schedule.ts,
 *   without croner;
 * - in every Node bundle, pg's glue for its native binding: it loads `pg-native`, which a bundled
 *   function never has (pg then behaves as where pg-native is not installed).
 */
export function leaveOut(fn: FunctionBundle) {
  const schedule = ownFile('../controls/schedule')
  const drainSchedule = ownFile('./drain-schedule')
  return {
    name: 'sluice-leave-out',
    setup(b: PluginBuild) {
      if (fn.migrations === false)
        b.onLoad({ filter: /[\\/]migrate[\\/](migrations|functions)\.generated\.[jt]s$/ }, (args) => {
          const name = args.path.includes('functions.generated') ? 'functions' : 'migrations'
          return { contents: `export const ${name} = null\n`, loader: 'js' }
        })
      if (fn.schedules === false)
        b.onLoad({ filter: /[\\/]controls[\\/]schedule\.[jt]s$/ }, (args) =>
          args.path === schedule
            ? {
                contents: `export * from ${JSON.stringify(drainSchedule)}\n`,
                loader: 'js',
                resolveDir: dirname(drainSchedule),
              }
            : undefined,
        )
      if (fn.target === 'node')
        b.onLoad({ filter: /[\\/]node_modules[\\/]pg[\\/]lib[\\/]native[\\/]index\.js$/ }, () => ({
          contents:
            "const e = new Error(\"Cannot find module 'pg-native' (not bundled)\"); e.code = 'MODULE_NOT_FOUND'; throw e\n",
          loader: 'js',
        }))
    },
  }
}

async function loadEsbuild(): Promise<Esbuild> {
  try {
    const name = 'esbuild'
    return (await import(name)) as Esbuild
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw error
    throw new ConfigError(
      '`sluice build` needs esbuild, which is not installed: run `npm install --save-dev esbuild`.',
    )
  }
}

async function bundle(
  esbuild: Esbuild,
  root: string,
  outDir: string,
  fn: FunctionBundle,
  choices: { external: readonly string[]; inject: readonly string[] },
): Promise<BundleReport> {
  if (!existsSync(join(root, fn.entry))) throw new BuildError(`Missing function entry ${fn.entry}`)
  const outfile = join(outDir, 'functions', fn.out)
  let metafile: MetafileLike & { outputs: object }
  try {
    const result = await esbuild.build({
      ...esbuildPreset(fn.target, choices),
      plugins: [leaveOut(fn)],
      absWorkingDir: root,
      entryPoints: [join(root, fn.entry)],
      outfile,
    })
    metafile = result.metafile!
  } catch (error) {
    const errors = (error as { errors?: { text: string; location?: { file?: string; line?: number } }[] })
      .errors
    const detail = (errors ?? [])
      .map((e) => `${e.location?.file ?? ''}:${e.location?.line ?? ''} ${e.text}`)
      .join('\n  ')
    const missing = [...new Set((errors ?? []).flatMap((e) => missingPackage(e.text)))]
    const install = missing.length ? `\n  Not installed: run \`npm install ${missing.join(' ')}\`.` : ''
    throw new BuildError(`Bundling ${fn.entry} failed:\n  ${detail || String(error)}${install}`)
  }
  if (fn.target === 'edge') {
    const builtins = nodeImports(metafile)
    if (builtins.length > 0) {
      throw new BuildError(
        `The edge bundle ${fn.entry} imports Node built-ins, which edge runtimes do not have:\n  ${builtins.join('\n  ')}`,
      )
    }
  }
  const reads = fileReads(metafile, root)
  if (reads.length > 0)
    throw new BuildError(
      `${fn.entry} would read files at run time, which a bundle does not carry (your code imports the file system):\n  ${reads.join('\n  ')}`,
    )
  const outputs = Object.keys(metafile.outputs).filter((file) => !file.endsWith('.map'))
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

/** Whether the project's vercel.json schedules a cron (which calls with CRON_SECRET). */
async function hasCrons(root: string): Promise<boolean> {
  try {
    const config = JSON.parse(await readFile(join(root, 'vercel.json'), 'utf8')) as { crons?: unknown }
    return Array.isArray(config.crons) && config.crons.length > 0
  } catch {
    return false
  }
}

/** The package an esbuild "Could not resolve" error is about, when it names a package (not a file). */
function missingPackage(text: string): string[] {
  const specifier = /^Could not resolve "([^"]+)"/.exec(text)?.[1]
  if (!specifier || /^[./]/.test(specifier) || isNodeBuiltin(specifier)) return []
  const parts = specifier.split('/')
  return [specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!]
}

/** Bundles the project's functions into `<outDir>/functions/`, in parallel; prints the size table. */
export async function buildFunctions(options: BuildFunctionsOptions = {}): Promise<FunctionsBuild> {
  const root = resolve(options.root ?? process.cwd())
  const outDir = resolve(root, options.outDir ?? 'dist')
  const log = options.log ?? ((line: string) => console.log(line))
  const all = options.functions ? [...options.functions] : await discoverFunctions(root)
  if (all.length === 0)
    throw new BuildError(
      `No functions in ${join(root, 'functions')}: run \`sluice init <aws | vercel | cloudflare>\` to write them.`,
      'INVALID_INPUT',
    )
  const only = options.only ? new Set(options.only) : undefined
  const chosen = only ? all.filter((fn) => only.has(fn.entry)) : all
  const unknown = [...(only ?? [])].filter((entry) => !all.some((fn) => fn.entry === entry))
  if (unknown.length > 0)
    throw new BuildError(
      `Not a function entry: ${unknown.join(', ')}. Entries: ${all.map((fn) => fn.entry).join(', ')}.`,
      'INVALID_INPUT',
    )
  if (options.vercelOutput) {
    // On Vercel the build sees the deployment's environment: a secret every cold start would
    // refuse fails the deploy here instead. (VERCEL=1 there: the secrets must be set too.)
    const env = options.env ?? process.env
    // Every Node function of Sluice's on Vercel serves a drain, which only wake-ups call; a cron
    // in vercel.json sends CRON_SECRET.
    const onVercel = env.VERCEL === '1'
    const problems = deployEnvProblems(env, {
      require: onVercel,
      drainUrl: onVercel && chosen.some((fn) => fn.vercel !== undefined && fn.target === 'node'),
      cron: onVercel && (await hasCrons(root)),
    })
    const advice = secretAdvice(problems)
    if (problems.length > 0)
      throw new BuildError(
        `the deployment's environment:\n  ${problems.join('\n  ')}${advice ? `\n  ${advice}` : ''}`,
      )
  }
  const esbuild = await loadEsbuild()
  await rm(join(outDir, 'functions'), { recursive: true, force: true })
  // A project with pg installed gets it bundled into its Node functions (they ship no node_modules).
  const inject = isInstalled(root, 'pg') ? [pgProvider()] : []
  if (inject.length === 0 && chosen.some((fn) => fn.target === 'node'))
    log(
      'note: pg is not installed, so the Node functions carry no driver for postgres:// URLs ' +
        '(a DATABASE_URL would fail at their first query): run `npm install pg`.',
    )
  const built = await Promise.allSettled(
    chosen.map((fn) => bundle(esbuild, root, outDir, fn, { external: options.external ?? [], inject })),
  )
  const failed = built.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []))
  if (failed.length > 0) {
    // Nothing half-built is left to deploy; every failing entry is named, in the table's order.
    await rm(join(outDir, 'functions'), { recursive: true, force: true })
    if (failed.length === 1 || !failed.every((e) => e instanceof BuildError)) throw failed[0]
    throw new BuildError(failed.map((e) => (e as Error).message).join('\n'))
  }
  const bundles = built.map((r) => (r as PromiseFulfilledResult<BundleReport>).value)
  log(sizeTable(bundles))
  if (options.vercelOutput) {
    await writeVercelOutput(join(outDir, 'functions'), resolve(root, options.vercelOutput), chosen)
    log(`vercel: Build Output API in ${relative(root, resolve(root, options.vercelOutput))}`)
  }
  return { outDir, functions: chosen, bundles }
}
