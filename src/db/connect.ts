import { ConfigError } from '../errors.js'
import { fromPg } from './pg.js'
import { fromPglite } from './pglite.js'
import type { Db } from './types.js'

/**
 * Opens a database from a URL: `postgres://…` or `postgresql://…` over a pg pool;
 * `pglite:memory` or `pglite:<directory>` on embedded PGlite. Drivers load on demand,
 * so an app that never opens a URL never pulls them in.
 */
export async function connect(url: string, options: { max?: number } = {}): Promise<Db> {
  if (/^postgres(ql)?:\/\//.test(url)) {
    const { default: pg } = await import('pg')
    const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 })
    // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
    pool.on('error', () => {})
    // A new connection can report its ready message and a FATAL error in one read, after the
    // pool has handed it out and before anyone listens: the query fails, the process does not.
    pool.on('connect', (client) => client.on('error', () => {}))
    return fromPg(pool, { owned: true })
  }
  if (url.startsWith('pglite:')) {
    const { PGlite } = await import('@electric-sql/pglite')
    const where = url.slice('pglite:'.length)
    const db = where === 'memory' || where === '' ? new PGlite() : new PGlite(where)
    await db.waitReady
    return fromPglite(db, { owned: true })
  }
  throw new ConfigError(
    `Unsupported database URL "${url.replace(/:[^:@/]*@/, ':***@')}": use postgres://…, pglite:memory or pglite:<directory>.`,
  )
}
