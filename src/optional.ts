/**
 * Optional peer dependencies (pg, @electric-sql/pglite, @opentelemetry/api, tsx,
 * @hono/node-server), imported by name when first needed. The specifier is a variable and
 * the comments tell webpack and Vite to leave the import alone, so no bundler (webpack,
 * Turbopack, esbuild, Vite) tries to resolve a driver the application never chose.
 *
 * A bundle that must carry a peer (a Lambda ships no node_modules) registers a loader for it
 * with `providePeer`: `sluice build` injects `db/bundle-pg` into the Node functions.
 */
import { ConfigError } from './errors.js'

const provided = new Map<string, () => Promise<unknown>>()

/** Serves `name` from `load` (a static `import()` the bundler resolved) instead of the module loader. */
export function providePeer(name: string, load: () => Promise<unknown>): void {
  provided.set(name, load)
}

/** `@scope/pkg/sub` → `@scope/pkg`, `pkg/sub` → `pkg`. */
function packageName(name: string): string {
  return name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!
}

/** The import() error of a package that is not installed (Node's ESM and CJS loaders, Bun, Deno). */
function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false
  // A package that is present but misses one of its own dependencies is a different failure.
  const message = String((error as { message?: unknown }).message)
  return [name, packageName(name)].some((n) => message.includes(`'${n}'`) || message.includes(`"${n}"`))
}

/**
 * Imports the optional package `name`; `neededFor` names the option or command that asked for
 * it (`database: "postgres://…"`, `sluice dev`). A package that is not installed is a
 * ConfigError saying what to install and why.
 */
export async function importOptional<T>(name: string, neededFor: string): Promise<T> {
  const load = provided.get(name)
  if (load) return (await load()) as T
  const specifier = name
  try {
    return (await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier)) as T
  } catch (error) {
    if (!isMissing(error, name)) throw error
    throw new ConfigError(
      `${neededFor} needs the package ${name}, which is not installed: install it with \`npm install ${packageName(name)}\`.`,
    )
  }
}
