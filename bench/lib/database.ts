import pg from 'pg'
import { bootEmbedded } from '../../test/support/embedded-postgres.js'

export interface BenchDatabase {
  /** URL of the fresh database this run uses. */
  url: string
  /** Where it lives: `DATABASE_URL` or `embedded`. */
  origin: 'DATABASE_URL' | 'embedded'
  name: string
  /** Drops the database (and stops an embedded cluster). Safe to call twice. */
  release(): Promise<void>
}

const redact = (url: string): string => url.replace(/:[^:@/]*@/, ':***@')

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/**
 * Creates `sluice_bench_<timestamp>` on the server `DATABASE_URL` points at, or on an
 * embedded cluster booted for the run when it is unset. The database is dropped at the end.
 */
export async function provision(log: (message: string) => void): Promise<BenchDatabase> {
  const fromEnv = process.env.DATABASE_URL
  const cluster = fromEnv ? undefined : await bootEmbedded('sluice-bench-pg-')
  const serverUrl = fromEnv ?? cluster!.url
  const name = `sluice_bench_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  log(`database ${name} on ${fromEnv ? redact(fromEnv) : 'an embedded cluster'}`)
  let released = false
  return {
    url: url.toString(),
    origin: fromEnv ? 'DATABASE_URL' : 'embedded',
    name,
    async release() {
      if (released) return
      released = true
      try {
        await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await cluster?.stop()
      }
    },
  }
}
