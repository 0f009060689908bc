/**
 * Vercel's Build Output API (v3): one `.func` directory per function (bundle and source map),
 * and routes: each function serves its own path (`/api/<name>`); each edge function takes the
 * paths below its own too, and every other /api path goes to the API's Node function (the one not
 * named drain or maintain), so `/api/jobs/welcome-email` reaches it however many segments it has. No
 * crons: `vercel build` adds vercel.json's crons to the output's own, so writing them here
 * would schedule each twice.
 */
import { existsSync } from 'node:fs'
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FunctionBundle } from './functions.js'

/** The Node.js runtime of every Node function (Lambda `nodejs24.x` too): the current LTS. */
export const NODE_RUNTIME = 'nodejs24.x'

/** Source-mapped stack traces in production (the bundles ship their .map files). */
export const NODE_OPTIONS = '--enable-source-maps'

export interface VercelRoute {
  src?: string
  dest?: string
  handle?: string
}

/** Entries named drain or maintain: functions that serve their own path only (vercelDrain, vercelMaintain). */
const LEAN = /[\\/](drain|maintain)\.[cm]?[jt]s$/

/** The routes of the output's config.json, in the order Vercel applies them. */
export function vercelRoutes(functions: readonly FunctionBundle[]): VercelRoute[] {
  const routes: VercelRoute[] = [{ handle: 'filesystem' }]
  // A rewrite keeps the request's URL, so the app routes on the original path.
  for (const fn of functions) {
    if (fn.vercel && fn.target === 'edge')
      routes.push({ src: `^/${fn.vercel.path}/.+$`, dest: `/${fn.vercel.path}` })
  }
  // Every other /api path goes to the API's function: the Node function that is not a lean
  // drain or maintenance function (those serve their own path only), else the only Node one.
  const node = functions.filter((fn) => fn.target === 'node' && fn.vercel)
  const api = node.find((fn) => !LEAN.test(fn.entry)) ?? (node.length === 1 ? node[0] : undefined)
  if (api?.vercel) routes.push({ src: '^/api(?:/.*)?$', dest: `/${api.vercel.path}` })
  return routes
}

function functionConfig(fn: FunctionBundle, file: string): Record<string, unknown> {
  if (fn.target === 'edge') return { runtime: 'edge', entrypoint: file }
  const maxDurationS = fn.vercel?.maxDurationS
  return {
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
}

/** Writes the tree to `target` (usually `.vercel/output`) from the bundles in `functionsDir`. */
export async function writeVercelOutput(
  functionsDir: string,
  target: string,
  functions: readonly FunctionBundle[],
): Promise<void> {
  await rm(target, { recursive: true, force: true })
  for (const fn of functions) {
    if (!fn.vercel) continue
    const dir = join(target, 'functions', `${fn.vercel.path}.func`)
    await mkdir(dir, { recursive: true })
    const file = fn.target === 'edge' ? 'index.js' : 'index.mjs'
    await copyFile(join(functionsDir, fn.out), join(dir, file))
    // The bundle names its map by its own file name (`//# sourceMappingURL=api.mjs.map`).
    const map = join(functionsDir, `${fn.out}.map`)
    if (existsSync(map)) await copyFile(map, join(dir, `${fn.out.split('/').pop()}.map`))
    await writeFile(join(dir, '.vc-config.json'), `${JSON.stringify(functionConfig(fn, file), null, 2)}\n`)
  }
  const config = { version: 3, routes: vercelRoutes(functions) }
  await writeFile(join(target, 'config.json'), `${JSON.stringify(config, null, 2)}\n`)
}
