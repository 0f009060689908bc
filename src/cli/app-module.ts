/**
 * Where a project keeps the module that exports its `sluice`. `sluice init` imports the
 * functions it writes from there, and the CLI loads it when there is no sluice.config.* file:
 * both look in the same places, in the same order.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** Where apps usually keep their Sluice, in the order both look. */
export const APP_CANDIDATES = [
  'sluice.config',
  'src/sluice',
  'src/lib/sluice',
  'lib/sluice',
  'sluice',
  'app/sluice',
  'src/app/sluice',
  'src/server/sluice',
  'server/sluice',
] as const
export const APP_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'] as const

const EXPORTS_SLUICE = /export\s+(?:const|let|var)\s+sluice\b|export\s*\{[^}]*\bsluice\b[^}]*\}/

/** Whether a module's source exports a binding named `sluice`. */
export const exportsSluice = (source: string): boolean => EXPORTS_SLUICE.test(source)

/** The first candidate under `root` that exports `sluice`, relative to root. */
export function findAppModule(root: string): string | undefined {
  for (const base of APP_CANDIDATES) {
    for (const ext of APP_EXTENSIONS) {
      const path = join(root, base + ext)
      if (existsSync(path) && exportsSluice(readFileSync(path, 'utf8'))) return base + ext
    }
  }
  return undefined
}
