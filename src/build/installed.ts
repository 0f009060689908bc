import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * Whether the package `name` is installed for the project at `root`: in a node_modules folder
 * there or in a folder above, where Node and esbuild look for it. (An ESM-only package with no
 * `require` export is found too, which `require.resolve` would miss.)
 */
export function isInstalled(root: string, name: string): boolean {
  for (let dir = root; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', name, 'package.json'))) return true
    if (dirname(dir) === dir) return false
  }
}
