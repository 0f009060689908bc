/**
 * The function table of a project: which entry files `sluice build` bundles, for which runtime,
 * and where each goes. It follows from the files themselves (the convention `sluice init`
 * writes), so there is no second list to keep in step:
 *
 * - every `functions/<platform>/<name>.ts` (or .mts, .js, .mjs) is one function; files in
 *   deeper folders are helpers the entries import;
 * - it runs on the edge when the file says so the way Vercel reads it (`export const runtime =
 *   'edge'` or `export const config = { runtime: 'edge' }`) or when it is under `cloudflare/`;
 * - `drain` and `maintain` entries leave Sluice's migrations out (`sluice migrate` is a deploy step),
 *   and `drain` entries the reading of recurring schedules (croner);
 * - under `vercel/`, it is served at `/api/<name>`, with `export const maxDuration = <s>` as its
 *   limit (written to the function's config and to SLUICE_MAX_DURATION_MS).
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FunctionTarget } from './preset.js'

export interface FunctionBundle {
  /** Entry point, relative to the project root. */
  entry: string
  /** Output file, relative to the output directory (`dist/functions`). */
  out: string
  target: FunctionTarget
  /** Where the bundle goes in Vercel's Build Output API, and with what limit. */
  vercel?: { path: string; maxDurationS?: number }
  /**
   * Bundle Sluice's migrations (about 160 KiB of SQL)? Default true; false for the entries named
   * `drain` and `maintain`: the deploy runs `sluice migrate`, and their migrate() says so.
   */
  migrations?: boolean
  /**
   * Bundle the reading of recurring schedules (croner, about 33 KiB)? Default true; false for
   * entries named `drain`: a drain never reads a schedule, and a read there throws a ConfigError.
   */
  schedules?: boolean
}

const ENTRY = /^([A-Za-z0-9][A-Za-z0-9_-]*)\.(ts|mts|js|mjs)$/
const EDGE =
  /export\s+const\s+(?:runtime\s*=\s*['"]edge['"]|config\s*=\s*\{[^}]*\bruntime\s*:\s*['"]edge['"])/
const MAX_DURATION = /export\s+const\s+maxDuration\s*=\s*(\d+)/

/** What an entry's source declares: the edge runtime, and Vercel's maxDuration. */
export function declared(source: string): { edge: boolean; maxDurationS?: number } {
  const seconds = MAX_DURATION.exec(source)?.[1]
  return { edge: EDGE.test(source), ...(seconds ? { maxDurationS: Number(seconds) } : {}) }
}

/** The function table of `<root>/<dir>` (default `functions`), sorted by entry. */
export async function discoverFunctions(root: string, dir = 'functions'): Promise<FunctionBundle[]> {
  const found: FunctionBundle[] = []
  const platforms = await readdir(join(root, dir), { withFileTypes: true }).catch(() => [])
  for (const platform of platforms) {
    if (!platform.isDirectory()) continue
    const files = await readdir(join(root, dir, platform.name), { withFileTypes: true })
    for (const file of files) {
      const name = ENTRY.exec(file.name)?.[1]
      if (!file.isFile() || !name || file.name.endsWith('.d.ts')) continue
      const entry = `${dir}/${platform.name}/${file.name}`
      const { edge, maxDurationS } = declared(await readFile(join(root, entry), 'utf8'))
      const target: FunctionTarget = edge || platform.name === 'cloudflare' ? 'edge' : 'node'
      found.push({
        entry,
        out: `${platform.name}/${name}.${target === 'node' ? 'mjs' : 'js'}`,
        target,
        ...(name === 'drain' || name === 'maintain' ? { migrations: false } : {}),
        ...(name === 'drain' ? { schedules: false } : {}),
        ...(platform.name === 'vercel'
          ? { vercel: { path: `api/${name}`, ...(maxDurationS ? { maxDurationS } : {}) } }
          : {}),
      })
    }
  }
  return found.sort((a, b) => a.entry.localeCompare(b.entry))
}
