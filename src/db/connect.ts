import { ConfigError } from '../errors.js'
import { importOptional } from '../optional.js'
import { fromPg, type PoolLike } from './pg.js'
import { fromPglite, type PGliteLike } from './pglite.js'
import type { Db } from './types.js'
import { postgresUrlProblem } from './url.js'

/** What `connect` needs of pg: its Pool. */
interface PgModule {
  Pool: new (config: {
    connectionString: string
    max: number
  }) => PoolLike & {
    on(event: 'error', listener: (error: Error) => void): unknown
    on(
      event: 'connect',
      listener: (client: { on(event: 'error', listener: () => void): unknown }) => void,
    ): unknown
  }
}

/** What `connect` needs of @electric-sql/pglite. */
interface PgliteModule {
  PGlite: new (dataDir?: string) => PGliteLike & { waitReady: Promise<void> }
}

export interface ConnectOptions {
  /** Pool size for postgres:// URLs. Default 10. */
  max?: number
  /** The option or variable the URL came from, named when its driver is missing. Default `database`. */
  source?: string
}

/**
 * Opens a database from a URL: `postgres://…` or `postgresql://…` over a pg pool;
 * `pglite:memory` or `pglite:<directory>` on embedded PGlite. The drivers are optional
 * peers, imported on demand (see optional.ts): a missing one is a ConfigError naming it.
 */
export async function connect(url: string, options: ConnectOptions = {}): Promise<Db> {
  const source = options.source ?? 'database'
  if (/^postgres(ql)?:\/\//.test(url)) {
    const problem = postgresUrlProblem(url, source)
    if (problem) throw new ConfigError(problem)
    const loaded = await importOptional<PgModule & { default?: PgModule }>('pg', `${source}: "postgres://…"`)
    const pg = loaded.default ?? loaded
    const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 })
    // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
    pool.on('error', () => {})
    // A new connection can report its ready message and a FATAL error in one read, after the
    // pool has handed it out and before anyone listens: the query fails, the process does not.
    pool.on('connect', (client) => client.on('error', () => {}))
    return fromPg(pool, { owned: true })
  }
  if (url.startsWith('pglite:')) {
    const { PGlite } = await importOptional<PgliteModule>('@electric-sql/pglite', `${source}: "pglite:…"`)
    const where = url.slice('pglite:'.length)
    const db = where === 'memory' || where === '' ? new PGlite() : new PGlite(where)
    await db.waitReady
    return fromPglite(db, { owned: true })
  }
  throw new ConfigError(
    `Unsupported database URL "${url.replace(/:[^:@/]*@/, ':***@')}": use postgres://…, pglite:memory or pglite:<directory>.`,
  )
}
