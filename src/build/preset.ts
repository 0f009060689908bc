/**
 * The esbuild options every deployable Sluice function is bundled with, for `sluice build`
 * and for anyone calling esbuild themselves:
 *
 *   import * as esbuild from 'esbuild'
 *   import { esbuildPreset, pgProvider } from 'sluice/build'
 *   await esbuild.build({
 *     ...esbuildPreset('node', { inject: [pgProvider()] }),
 *     entryPoints: ['functions/aws/drain.ts'],
 *     outfile: 'dist/functions/aws/drain.mjs',
 *   })
 *
 * No esbuild import here: the options are plain data, so this module loads (and type-checks)
 * without esbuild installed.
 */
import { builtinModules } from 'node:module'
import { relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** `node`: Lambda, Vercel's Node.js runtime. `edge`: Vercel Edge, Cloudflare Workers (no Node built-ins). */
export type FunctionTarget = 'node' | 'edge'

/**
 * Bundled CommonJS dependencies (pg) call require() for Node built-ins; an ESM bundle has no
 * require, and would answer every request with "Dynamic require of "events" is not supported".
 */
export const NODE_BANNER =
  "import { createRequire as __sluiceCreateRequire } from 'node:module';" +
  'const require = __sluiceCreateRequire(import.meta.url);'

/**
 * Left out of Node bundles: loaded on demand for `pglite:` URLs (local development) and by pg's
 * optional native binding, never on a platform.
 */
export const NODE_EXTERNALS: readonly string[] = ['@electric-sql/pglite', 'pg-native']

const NODE_BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))

/** `fs`, `node:fs`, `fs/promises`, `stream/web`: a module edge runtimes do not have. */
export function isNodeBuiltin(path: string): boolean {
  return path.startsWith('node:') || NODE_BUILTINS.has(path) || NODE_BUILTINS.has(path.split('/')[0]!)
}

/**
 * The module that registers a bundled pg with Sluice's driver loader (`db/bundle-pg`), for
 * `inject`: the Node functions then connect to `postgres://` URLs without a node_modules.
 */
export function pgProvider(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js'
  return fileURLToPath(new URL(`../db/bundle-pg.${ext}`, import.meta.url))
}

/** The subset of esbuild's BuildOptions the preset sets (structurally compatible with them). */
export interface PresetOptions {
  bundle: true
  minify: boolean
  keepNames: true
  sourcemap: 'linked'
  sourcesContent: false
  format: 'esm'
  metafile: true
  legalComments: 'none'
  logLevel: 'silent'
  platform: 'node' | 'browser'
  target: string
  banner?: { js: string }
  external: string[]
  inject?: string[]
  conditions?: string[]
  mainFields?: string[]
}

export interface PresetChoices {
  /** More packages to leave out of the bundle (they must then be installed where it runs). */
  external?: readonly string[]
  /** Default true. */
  minify?: boolean
  /**
   * Files bundled into every Node function before its entry: `pgProvider()` here makes the
   * bundle carry pg (optional drivers are loaded by a name bundlers leave alone, so a function
   * that ships no node_modules needs its driver provided).
   */
  inject?: readonly string[]
}

/**
 * One self-contained ESM file per function: minified, class and function names kept (errors
 * read `ConfigError`, not `N`), a linked source map without sources (positions only, for
 * `--enable-source-maps`). Node: target node20, the createRequire banner, optional peers
 * external. Edge: browser platform with the workerd/worker conditions, Node built-ins external
 * so that a check can name whoever imports one (see `nodeImports`).
 */
export function esbuildPreset(target: FunctionTarget, choices: PresetChoices = {}): PresetOptions {
  const common = {
    bundle: true,
    minify: choices.minify ?? true,
    keepNames: true,
    sourcemap: 'linked',
    sourcesContent: false,
    format: 'esm',
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
  } as const
  const extra = choices.external ?? []
  if (target === 'node') {
    return {
      ...common,
      platform: 'node',
      target: 'node20',
      banner: { js: NODE_BANNER },
      external: [...NODE_EXTERNALS, ...extra],
      ...(choices.inject?.length ? { inject: [...choices.inject] } : {}),
    }
  }
  return {
    ...common,
    platform: 'browser',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    external: [...NODE_BUILTINS, ...extra],
  }
}

/** What esbuild's metafile says each input imports (the part of it the checks read). */
export interface MetafileLike {
  inputs: Record<string, { imports: readonly { path: string; external?: boolean }[] }>
}

/** Imports of Node built-ins in a metafile, as `input → import`. */
export function nodeImports(metafile: MetafileLike): string[] {
  const found: string[] = []
  for (const [input, info] of Object.entries(metafile.inputs)) {
    for (const imported of info.imports) {
      if (imported.external && isNodeBuiltin(imported.path)) found.push(`${input} → ${imported.path}`)
    }
  }
  return found
}

const FS_MODULES = new Set(['fs', 'fs/promises', 'node:fs', 'node:fs/promises'])

/**
 * Inputs that are the project's own code (not a dependency) and import the file system: they
 * would read files at run time. Inputs are paths as the metafile gives them, relative to
 * `root` (esbuild's absWorkingDir) when given; own code is under root and outside node_modules.
 */
export function fileReads(metafile: MetafileLike, root?: string): string[] {
  const found: string[] = []
  for (const [input, info] of Object.entries(metafile.inputs)) {
    const path = root ? relative(root, resolve(root, input)) : input
    if (path.startsWith('..') || /(^|\/)node_modules\//.test(path)) continue
    for (const imported of info.imports)
      if (FS_MODULES.has(imported.path)) found.push(`${input} → ${imported.path}`)
  }
  return found
}
