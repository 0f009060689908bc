import { chmod, lstat, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { fakeClone } from './clone-tree.js'
import { runModule } from './run-module.js'

// As root, a clone under a private directory boots the embedded server from a copy of its
// packages kept in the temporary directory, made by the first clone that needs it and reused by
// every later one. Clones come and go (CI clones afresh into a new directory each run): the copy
// must not depend on the clone that made it.
const asRoot = process.getuid?.() === 0
const embedded = fileURLToPath(new URL('./embedded-postgres.ts', import.meta.url))
const pgModule = pathToFileURL(createRequire(import.meta.url).resolve('pg')).href
const made: string[] = []
let privateDir = ''

beforeAll(async () => {
  // mkdtemp makes it 0700: only root gets in.
  privateDir = await mkdtemp(join(tmpdir(), 'sluice-private-'))
  made.push(privateDir)
})

afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true })
})

/** A temporary directory of its own for a test's runs (their TMPDIR), which every user can enter. */
async function temporaryDirectory(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-shared-tmp-'))
  made.push(dir)
  await chmod(dir, 0o755)
  return dir
}

/**
 * A test run in a clone, as `npm test` makes one: a process of its own boots the embedded
 * server from the clone at `resolveFrom` (with TMPDIR at `tmp`), queries it and stops it.
 */
function runIn(resolveFrom: string, tmp: string): Promise<{ code: number | null; stderr: string }> {
  return runModule(
    `import pg from ${JSON.stringify(pgModule)}
     import { bootEmbedded } from ${JSON.stringify(embedded)}
     const cluster = await bootEmbedded('sluice-shared-pg-', { resolveFrom: ${JSON.stringify(resolveFrom)} })
     const client = new pg.Client({ connectionString: cluster.url })
     await client.connect()
     const { rows } = await client.query('SELECT 1 + 1 AS v')
     await client.end()
     await cluster.stop()
     if (rows[0].v !== 2) process.exitCode = 1`,
    { TMPDIR: tmp },
  )
}

/** The shared copy in `tmp` (there is one). */
async function sharedCopy(tmp: string): Promise<string> {
  const copies = (await readdir(tmp)).filter(
    (name) => name.startsWith('sluice-embedded-postgres-') && !name.includes('-build-'),
  )
  expect(copies).toHaveLength(1)
  return join(tmp, copies[0] ?? '')
}

test.runIf(asRoot)(
  'a clone boots from the copy another clone made, after that clone is deleted',
  async () => {
    const tmp = await temporaryDirectory()
    const first = join(privateDir, 'first')
    const built = await runIn(await fakeClone(first, 'copied'), tmp)
    expect(built.code, built.stderr).toBe(0)
    await rm(first, { recursive: true, force: true })

    const reused = await runIn(await fakeClone(join(privateDir, 'second'), 'copied'), tmp)
    expect(reused.code, reused.stderr).toBe(0)
  },
  240_000,
)

test.runIf(asRoot)(
  'a copy whose dependencies are links into a deleted clone is rebuilt, not trusted',
  async () => {
    const tmp = await temporaryDirectory()
    const clone = await fakeClone(join(privateDir, 'third'), 'copied')
    const built = await runIn(clone, tmp)
    expect(built.code, built.stderr).toBe(0)
    // The copy as earlier versions made it: finished, its dependencies links into a clone since deleted.
    const copy = await sharedCopy(tmp)
    for (const dep of ['pg', 'async-exit-hook']) {
      await rm(join(copy, 'node_modules', dep), { recursive: true, force: true })
      await symlink(join(privateDir, 'deleted', 'node_modules', dep), join(copy, 'node_modules', dep), 'dir')
    }
    await writeFile(join(copy, '.complete'), '')

    const reused = await runIn(clone, tmp)
    expect(reused.code, reused.stderr).toBe(0)
    expect((await lstat(join(await sharedCopy(tmp), 'node_modules', 'pg'))).isDirectory()).toBe(true)
  },
  240_000,
)
