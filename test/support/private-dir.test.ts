import {
  copyFile,
  link,
  mkdir,
  mkdtemp,
  readdir,
  readlink,
  realpath,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { afterAll, expect, test } from 'vitest'
import { bootEmbedded, type EmbeddedCluster } from './embedded-postgres.js'

// `npm test` as root in a clone under a private directory (mode 700, as under /root or a
// `mktemp -d`): the embedded server runs as the unprivileged postgres user, which cannot
// enter that directory to reach the binaries installed in node_modules.
const asRoot = process.getuid?.() === 0
const require = createRequire(import.meta.url)
let privateDir: string | undefined
let cluster: EmbeddedCluster | undefined

afterAll(async () => {
  await cluster?.stop()
  if (privateDir) await rm(privateDir, { recursive: true, force: true })
})

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

/** The package directory of `name` as installed here (its real path). */
async function installed(name: string, from = require): Promise<string> {
  let dir = dirname(await realpath(from.resolve(name)))
  while (!dir.endsWith(join('node_modules', name))) dir = dirname(dir)
  return dir
}

test.runIf(asRoot)('boots from a clone in a directory only root can enter', async () => {
  privateDir = await mkdtemp(join(tmpdir(), 'sluice-private-'))
  // mkdtemp makes it 0700: only root gets in.
  const modules = join(privateDir, 'clone', 'node_modules')
  await mkdir(join(modules, '@embedded-postgres'), { recursive: true })
  const library = await installed('embedded-postgres')
  const platform = `@embedded-postgres/${process.platform}-${process.arch}`
  const libraryRequire = createRequire(join(library, 'package.json'))
  // The packages that hold code the postgres user runs are copied into the private clone;
  // the rest only this (root) process loads, so links do.
  await linkTree(library, join(modules, 'embedded-postgres'))
  await linkTree(await installed(platform, libraryRequire), join(modules, platform))
  for (const dep of ['pg', 'async-exit-hook'])
    await symlink(await installed(dep, libraryRequire), join(modules, dep), 'dir')
  const anchor = join(privateDir, 'clone', 'anchor.js')
  await writeFile(anchor, '')

  cluster = await bootEmbedded('sluice-private-pg-', { resolveFrom: pathToFileURL(anchor).href })
  const client = new pg.Client({ connectionString: cluster.url })
  await client.connect()
  const { rows } = await client.query<{ v: number }>('SELECT 1 + 1 AS v')
  await client.end()
  expect(rows[0]?.v).toBe(2)
})
