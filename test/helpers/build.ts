import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type BuildOptions, type BuildResult, build } from '../../scripts/build.js'

export interface TempBuild extends BuildResult {
  /** Imports a built file (relative to outDir) as a module. */
  load<T = Record<string, unknown>>(file: string): Promise<T>
  remove(): Promise<void>
}

export const root = join(import.meta.dirname, '../..')

/**
 * Runs the real build into a temporary directory inside node_modules/.cache, so that the
 * output resolves the project's dependencies (the library's imports, the bundles' externals).
 */
export async function buildToTemp(
  options: Omit<BuildOptions, 'outDir' | 'vercelOutput'> & { vercel?: boolean } = {},
): Promise<TempBuild> {
  const base = join(root, 'node_modules/.cache')
  await mkdir(base, { recursive: true })
  const outDir = await mkdtemp(join(base, 'sluice-build-'))
  const { vercel, ...rest } = options
  const result = await build({
    log: () => {},
    library: false,
    ...rest,
    outDir,
    vercelOutput: vercel ? join(outDir, 'vercel-output') : false,
  })
  return {
    ...result,
    load: (file) => import(pathToFileURL(join(outDir, file)).href),
    remove: () => rm(outDir, { recursive: true, force: true }),
  }
}

/** Sets environment variables until the returned function restores them. */
export function setEnv(values: Record<string, string>): () => void {
  const before = Object.fromEntries(Object.keys(values).map((key) => [key, process.env[key]]))
  Object.assign(process.env, values)
  return () => {
    for (const [key, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
  }
}
