/**
 * What `sluice init` needs to know about the project it runs in: TypeScript or JavaScript,
 * ESM or CommonJS, its name, the module that exports its `sluice`, and where a Next.js app
 * keeps its routes.
 */
import { existsSync, readFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import { exportsSluice, findAppModule } from '../app-module.js'
import { UsageError } from '../errors.js'

export interface Project {
  root: string
  /** Package name, for the service and worker names. */
  name: string
  typescript: boolean
  /** package.json `"type": "module"`: a .js file is ESM. */
  esm: boolean
  /** The module exporting the app's `sluice`, relative to root (`sluice.config.ts`, `src/lib/sluice.ts`). */
  app: string
  /** True when the app module is not there yet: init writes the skeleton. */
  appMissing: boolean
  /** The Next.js app directory (`app` or `src/app`), relative to root. */
  nextAppDir: string
}

function readJson(path: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>
  } catch {
    return {}
  }
}

/** A service or worker name from the package name: `@acme/shop-api` → `shop-api`. */
export function serviceName(name: string): string {
  const base = name.split('/').pop() ?? ''
  const cleaned = base
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
  return /^[a-z]/.test(cleaned) ? cleaned.slice(0, 40) : `sluice-${cleaned}`.slice(0, 40).replace(/-$/, '')
}

export function inspectProject(root: string, explicitApp?: string): Project {
  const pkg = readJson(join(root, 'package.json'))
  const typescript = existsSync(join(root, 'tsconfig.json'))
  const esm = pkg.type === 'module'
  let app: string
  let appMissing = false
  if (explicitApp) {
    const path = resolve(root, explicitApp)
    if (!existsSync(path))
      throw new UsageError(
        `--app ${explicitApp} does not exist.`,
        'Pass the module that exports your `sluice`.',
      )
    if (!exportsSluice(readFileSync(path, 'utf8')))
      throw new UsageError(
        `${explicitApp} does not export \`sluice\`.`,
        'The functions import `{ sluice }` from it: add `export const sluice = createSluice({ … })`.',
      )
    app = relative(root, path).split(sep).join('/')
  } else {
    const found = findAppModule(root)
    appMissing = found === undefined
    app = found ?? (typescript ? 'sluice.config.ts' : esm ? 'sluice.config.js' : 'sluice.config.mjs')
  }
  const nextAppDir = existsSync(join(root, 'src/app')) && !existsSync(join(root, 'app')) ? 'src/app' : 'app'
  return {
    root,
    name: typeof pkg.name === 'string' && pkg.name ? pkg.name : basename(root),
    typescript,
    esm,
    app,
    appMissing,
    nextAppDir,
  }
}

/**
 * The import specifier of the app module from a file (both relative to root). `extension`:
 * `.js` for a TypeScript source (what Node's and TypeScript's ESM resolution want, and
 * bundlers map back to .ts), none for Next.js (its bundler resolves .ts itself).
 */
export function importPath(fromFile: string, app: string, style: 'esm' | 'bundler'): string {
  let rel = relative(dirname(fromFile), app).split(sep).join('/')
  if (!rel.startsWith('.')) rel = `./${rel}`
  if (style === 'bundler') return rel.replace(/\.(m?[jt]s)$/, '')
  return rel.replace(/\.ts$/, '.js').replace(/\.mts$/, '.mjs')
}
