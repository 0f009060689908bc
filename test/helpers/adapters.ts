import { PGlite } from '@electric-sql/pglite'
import { neon, neonConfig } from '@neondatabase/serverless'
import { type Db, fromNeonHttp, fromNeonPool, fromPg, fromPglite } from '../../src/index.js'
import { configureNeonHttpForLocal, startNeonHttpServer } from '../support/neon-http-server.js'
import { localNeonPool, startWsProxy } from '../support/ws-proxy.js'
import { databaseUrl, pgPool } from './db.js'

export interface AdapterCase {
  name: 'pg' | 'neon-ws' | 'neon-http' | 'pglite'
  /** Opens a Db for one test file; `close` releases everything it started. */
  open(): Promise<{ db: Db; close(): Promise<void> }>
}

export const adapterCases: AdapterCase[] = [
  {
    name: 'pg',
    async open() {
      const pool = pgPool(4)
      return { db: fromPg(pool), close: () => pool.end() }
    },
  },
  {
    name: 'neon-ws',
    async open() {
      const url = new URL(databaseUrl)
      const proxy = await startWsProxy({ host: url.hostname, port: Number(url.port || 5432) })
      const pool = localNeonPool({ connectionString: databaseUrl, max: 4 }, proxy.port)
      return {
        db: fromNeonPool(pool),
        async close() {
          await pool.end()
          await proxy.close()
        },
      }
    },
  },
  {
    name: 'neon-http',
    async open() {
      const server = await startNeonHttpServer({ connectionString: databaseUrl })
      configureNeonHttpForLocal(neonConfig, server.port)
      // The driver insists on a user, host and database in the URL; the local endpoint uses its own.
      return {
        db: fromNeonHttp(neon('postgres://sluice:sluice@localhost:5432/sluice')),
        close: () => server.close(),
      }
    },
  },
  {
    name: 'pglite',
    async open() {
      const lite = new PGlite()
      await lite.waitReady
      return { db: fromPglite(lite), close: () => lite.close() }
    },
  },
]
