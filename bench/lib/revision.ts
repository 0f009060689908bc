import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/**
 * Another revision's src/, extracted with `git archive` into a temporary directory (with a link
 * to this checkout's node_modules), to import from: `join(dir, 'src', …)`.
 */
export function revisionDir(rev: string): { sha: string; dir: string } {
  const sha = execFileSync('git', ['rev-parse', '--short', rev], { cwd: root, encoding: 'utf8' }).trim()
  const dir = join(tmpdir(), 'sluice-ab', sha)
  if (!existsSync(join(dir, 'src'))) {
    mkdirSync(dir, { recursive: true })
    const tar = execFileSync('git', ['archive', sha, 'src'], { cwd: root, maxBuffer: 256 * 1024 * 1024 })
    execFileSync('tar', ['-x', '-C', dir], { input: tar })
  }
  if (!existsSync(join(dir, 'node_modules')))
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  return { sha, dir }
}
