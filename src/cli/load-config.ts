import { spawnSync } from 'node:child_process'
import { access } from 'node:fs/promises'
import { register as nodeRegister } from 'node:module'
import { isAbsolute, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { importOptional } from '../optional.js'
import type { Sluice } from '../sluice.js'
import { findAppModule } from './app-module.js'
import { CliError, EXIT, UsageError } from './errors.js'

export const CONVENTIONAL_NAMES = ['sluice.config.ts', 'sluice.config.js', 'sluice.config.mjs'] as const

/** What the CLI takes from a config file. */
export interface App {
  sluice: Sluice
  /** The named export `setup(sluice)`: the app's own tables; run by `migrate` and `dev` after Sluice's migrations. */
  setup: ((sluice: Sluice) => unknown) | undefined
  /** The named export `samples`: job name → an input `dev` uses in the commands it suggests. */
  samples: Record<string, unknown>
  /** Absolute path of the config file. */
  path: string
}

/** What the CLI passes to a config whose default export is a function. */
export interface ConfigContext {
  /** The database the CLI chose: DATABASE_URL, or the embedded PGlite (`pglite:<dir>` or `pglite:memory`). */
  database: string
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  )

/**
 * `--config <file>`; else sluice.config.ts, .js or .mjs in the working directory; else the
 * module `sluice init` would import the app from (src/sluice.ts, src/lib/sluice.ts, …: the first
 * one that exports `sluice`).
 */
export async function findConfig(explicit: string | undefined, cwd = process.cwd()): Promise<string> {
  if (explicit) {
    const path = resolve(cwd, explicit)
    if (!(await exists(path)))
      throw new UsageError(
        `Config file ${explicit} does not exist.`,
        `Pass --config <file> with a path from ${cwd}.`,
      )
    return path
  }
  for (const name of CONVENTIONAL_NAMES) {
    const path = resolve(cwd, name)
    if (await exists(path)) return path
  }
  const app = findAppModule(cwd)
  if (app) return resolve(cwd, app)
  const example = 'examples/sluice.config.ts'
  const here = (await exists(resolve(cwd, example))) ? ` (here: --config ${example})` : ''
  throw new UsageError(
    `No sluice.config.ts, .js or .mjs in ${cwd}, and no module there that exports \`sluice\` (src/sluice.ts, src/lib/sluice.ts, lib/sluice.ts, …).`,
    `Pass --config <file>${here}, or create sluice.config.ts with ` +
      '`export default ({ database }) => createSluice({ database, jobs: [...] })`.',
  )
}

export const displayPath = (path: string, cwd = process.cwd()): string => {
  const rel = relative(cwd, path)
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path
}

/** True when this CLI itself runs from TypeScript source, i.e. under a loader such as tsx. */
const runningFromSource = import.meta.url.endsWith('.ts')

/**
 * Imports the config. A TypeScript config under plain Node goes through tsx's loader,
 * registered for the whole process rather than with `tsImport`: `tsImport` loads the
 * module graph under a namespace, which would give the config its own copies of Sluice
 * and zod (and `instanceof` checks, such as the HTTP app's error mapping, would fail).
 */
async function importModule(path: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path).href
  if (!/\.[cm]?ts$/.test(path) || runningFromSource) return import(url)
  let register: () => unknown
  try {
    ;({ register } = await importOptional<{ register: () => unknown }>(
      'tsx/esm/api',
      `--config ${displayPath(path)}`,
    ))
  } catch {
    throw new CliError(`Loading ${displayPath(path)} needs tsx, which is not installed.`, {
      code: 'INVALID_CONFIG',
      exitCode: EXIT.USAGE,
      hint: 'Install it (`npm i -D tsx`), or write the config as sluice.config.mjs.',
    })
  }
  // Stays registered: the config may import more TypeScript later (lazily, from a handler).
  register()
  registerTypeScriptAsModules()
  return import(url)
}

/**
 * A load hook, registered after tsx's and so asked first, that reads the project's TypeScript
 * (.ts, .tsx, .mts; not .cts, not in node_modules) as ES modules whatever package.json's "type"
 * says, as bundlers and frameworks read it. A new Next.js project has no "type": tsx would then
 * load an app module written with `import` as CommonJS, and Node 20 refuses its require() of the
 * ESM-only sluice ("Cannot require() ES Module … in a cycle").
 */
const TYPESCRIPT_AS_MODULES = `export async function load(url, context, next) {
  const path = url.startsWith('file:') ? new URL(url).pathname : ''
  if (/\\.(ts|tsx|mts)$/.test(path) && !path.includes('/node_modules/'))
    return next(url, { ...context, format: 'module' })
  return next(url, context)
}`

let typescriptAsModules = false
function registerTypeScriptAsModules(): void {
  if (typescriptAsModules) return
  typescriptAsModules = true
  nodeRegister(`data:text/javascript,${encodeURIComponent(TYPESCRIPT_AS_MODULES)}`)
}

const isSluice = (value: unknown): value is Sluice =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Sluice).enqueue === 'function' &&
  typeof (value as Sluice).drain === 'function' &&
  typeof (value as Sluice).config === 'object'

/**
 * Imports the config and gets its Sluice. A default export that is a function is called
 * with `{ database }` (the database the CLI chose); a Sluice instance is used as it is,
 * with the database it was created with. A module with no default export (the app module
 * the functions import) gives its named export `sluice`.
 */
export async function loadApp(path: string, context: ConfigContext): Promise<App> {
  const shown = displayPath(path)
  let mod: Record<string, unknown>
  try {
    mod = await importModule(path)
  } catch (error) {
    if (error instanceof CliError) throw error
    throw loadFailure(shown, withSyntaxLocation(error, path), 'import')
  }
  const exported = mod.default === undefined && isSluice(mod.sluice) ? mod.sluice : mod.default
  let sluice: unknown
  try {
    sluice =
      typeof exported === 'function' ? await (exported as (c: ConfigContext) => unknown)(context) : exported
  } catch (error) {
    throw loadFailure(shown, error, 'factory')
  }
  if (!isSluice(sluice)) {
    throw new CliError(
      exported === undefined
        ? `${shown} has no default export and no export \`sluice\` that is a Sluice.`
        : `The default export of ${shown} is not a Sluice.`,
      {
        code: 'INVALID_CONFIG',
        hint: 'Export `createSluice({...})`, or a function `({ database }) => createSluice({ database, ... })`.',
      },
    )
  }
  // An instance created at import time, with no database option and no DATABASE_URL: it cannot be
  // handed the database the CLI chose (the embedded one), and would fail at its first operation.
  if (typeof exported !== 'function' && sluice.config.database === undefined)
    throw new CliError(
      `${shown} exports a Sluice with no database: No database option and no DATABASE_URL.`,
      {
        code: 'INVALID_CONFIG',
        hint:
          'To let the CLI give it the embedded database, export a function: ' +
          '`export default ({ database }) => createSluice({ database, ... })`; or set DATABASE_URL.',
      },
    )
  const setup = mod.setup
  if (setup !== undefined && typeof setup !== 'function')
    throw new CliError(`The export \`setup\` of ${shown} is not a function.`, { code: 'INVALID_CONFIG' })
  const samples = typeof mod.samples === 'object' && mod.samples !== null ? mod.samples : {}
  return {
    sluice,
    setup: setup as App['setup'],
    samples: samples as Record<string, unknown>,
    path,
  }
}

/** The environment variable an INVALID_CONFIG error is about (its first issue's path is `env.<NAME>`). */
function envVariableOf(error: unknown): string | undefined {
  const issues =
    typeof error === 'object' && error !== null ? (error as { issues?: unknown }).issues : undefined
  const path = Array.isArray(issues) ? (issues[0] as { path?: unknown } | undefined)?.path : undefined
  return Array.isArray(path) && path[0] === 'env' && typeof path[1] === 'string' ? path[1] : undefined
}

/**
 * Node's SyntaxError from importing a .js/.mjs/.cjs module names no file or line. When the file
 * itself is at fault, `node --check` says where: the error gains " (at file:line)". A syntax error
 * in a module it imports stays as it was.
 */
function withSyntaxLocation(error: unknown, path: string): unknown {
  if (!(error instanceof SyntaxError) || !/\.[mc]?js$/.test(path)) return error
  const checked = spawnSync(process.execPath, ['--check', path], { encoding: 'utf8', timeout: 10_000 })
  const line = checked.status === 1 ? /^(.+):(\d+)$/m.exec(checked.stderr)?.[2] : undefined
  if (!line) return error
  return new SyntaxError(`${error.message} (at ${displayPath(path)}:${line})`)
}

/** The CLI's error for a config that failed to load (`import`) or to build its Sluice (`factory`). */
export function loadFailure(shown: string, error: unknown, phase: 'import' | 'factory'): CliError {
  const message = error instanceof Error ? error.message : String(error)
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  const variable = code === 'INVALID_CONFIG' ? envVariableOf(error) : undefined
  // The config is fine; the environment it runs in is not.
  if (variable)
    return new CliError(message, {
      code: 'INVALID_CONFIG',
      exitCode: EXIT.USAGE,
      hint: `Fix or unset ${variable} in the environment${variable === 'SLUICE_SCHEMA' ? ' (unset, the schema is "sluice")' : ''}.`,
    })
  // A Sluice created at import time cannot be handed the embedded database; say so when it may be why.
  const atImport = phase === 'import' && code === 'INVALID_CONFIG' && !process.env.DATABASE_URL
  // Node read a .js file as CommonJS (the package's "type" is not "module").
  const commonJs = phase === 'import' && /Cannot use import statement outside a module/.test(message)
  return new CliError(`Loading ${shown} failed: ${message}`, {
    code: 'INVALID_CONFIG',
    exitCode: EXIT.FAILED,
    hint: atImport
      ? 'A config that calls createSluice when it is imported needs DATABASE_URL. To let the CLI give it the ' +
        'embedded database, export a function: `export default ({ database }) => createSluice({ database, ... })`.'
      : commonJs
        ? 'Node read a .js file with `import` as CommonJS: set "type": "module" in package.json, or name ' +
          'the files that use `import` .mjs.'
        : 'The error comes from the config file or a module it imports.',
  })
}
