import { resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { inClass, SQLSTATE, SQLSTATE_CLASS } from '../db/sqlstate.js'
import { postgresUrlProblem } from '../db/url.js'
import { ConfigError } from '../errors.js'
import { importOptional } from '../optional.js'
import { CliError, EXIT } from './errors.js'
import { displayPath } from './load-config.js'
import { acquire, currentHolder, type Holder, type Lock, lockFile } from './lock.js'
import { type DevServer, reachDevServer } from './remote.js'

export const DEFAULT_DATA_DIR = '.sluice'

/** Where a command's work happens. */
export type Target =
  | {
      via: 'direct'
      /** The URL handed to the config. */
      database: string
      /** For messages: "PostgreSQL at 127.0.0.1:5432/app". */
      where: string
      /** Held while the embedded database is open. */
      lock?: Lock
    }
  | { via: 'dev-server'; server: DevServer; where: string }

export function stateDir(dataDir: string | undefined): string {
  return resolve(dataDir ?? DEFAULT_DATA_DIR)
}

export const embeddedUrl = (dir: string): string => `pglite:${resolve(dir, 'pglite')}`

/** "PostgreSQL at host:port/db" (never the password), or the PGlite location. */
export function describeUrl(url: string): string {
  if (url.startsWith('pglite:')) {
    const where = url.slice('pglite:'.length)
    return where === 'memory' || where === '' ? 'in-memory PGlite' : `PGlite in ${displayPath(where)}`
  }
  try {
    const u = new URL(url)
    return `PostgreSQL at ${u.hostname || 'localhost'}:${u.port || '5432'}${u.pathname}`
  } catch {
    return 'the database in DATABASE_URL'
  }
}

/** The sentence after "… is in use by": who holds the embedded database. */
const holderText = (holder: Holder): string =>
  holder.pid
    ? `\`sluice ${holder.command}\` (pid ${holder.pid}${holder.url ? `, ${holder.url}` : ''})`
    : 'another process'

const busyHint = (dir: string): string =>
  'The embedded database (PGlite) serves one process at a time. Wait for that command to finish, or keep ' +
  '`sluice dev` running: the other commands then go through it. With DATABASE_URL set, any number of ' +
  `processes can work at once. If no such sluice process is running, delete ${displayPath(lockFile(dir))}.`

/**
 * The embedded database needs @electric-sql/pglite, an optional peer: without it (and without
 * DATABASE_URL) a command says what to install, exiting as for any database it cannot open.
 */
export async function requireEmbedded(command: string): Promise<void> {
  try {
    await importOptional('@electric-sql/pglite', `sluice ${command} without DATABASE_URL`)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    throw new CliError(`${error.message.replace(/: install it with .*$/, '')} (the embedded database).`, {
      code: 'DATABASE_UNAVAILABLE',
      exitCode: EXIT.DATABASE,
      hint: 'Install it (`npm install -D @electric-sql/pglite`), or set DATABASE_URL to a PostgreSQL server.',
    })
  }
}

/**
 * DATABASE_URL as the CLI hands it to the config, refused at once (exit 2, naming the variable)
 * unless it is a URL `connect` opens: postgres:// or postgresql://, pglite:memory or pglite:<directory>.
 */
export function checkDatabaseUrl(url: string, source = 'DATABASE_URL'): string {
  if (url.startsWith('pglite:')) return url
  if (/^postgres(ql)?:\/\//.test(url)) {
    const problem = postgresUrlProblem(url, source)
    if (!problem) return url
    throw new CliError(problem, {
      code: 'INVALID_CONFIG',
      exitCode: EXIT.USAGE,
      hint: `${source} has the form postgres://user:password@host:5432/db.`,
    })
  }
  throw new CliError(
    `${source} is not a database URL Sluice can open: "${url.replace(/:[^:@/]*@/, ':***@')}".`,
    {
      code: 'INVALID_CONFIG',
      exitCode: EXIT.USAGE,
      hint:
        `Set ${source} to postgres://user:password@host:5432/db (or postgresql://…), or to pglite:memory ` +
        'or pglite:<directory> for an embedded PGlite; or unset it to use the embedded database in ./.sluice/pglite.',
    },
  )
}

/**
 * Picks where a command runs. DATABASE_URL wins and is used directly. Without it the
 * command needs the embedded database in `<data dir>/pglite`: if `sluice dev` holds it
 * and answers, the command runs inside the dev server; otherwise the command takes the
 * lock and opens the database itself. A busy database is waited for up to `waitMs`.
 */
export async function chooseTarget(
  command: string,
  dataDir: string | undefined,
  options: {
    waitMs?: number
    allowDevServer?: boolean
    /** Runs before the command opens the database itself (not when it goes through the dev server): find the config. */
    beforeOpening?: () => Promise<void>
  } = {},
): Promise<Target> {
  const url = process.env.DATABASE_URL
  if (url) {
    checkDatabaseUrl(url)
    // pglite:memory or pglite:<dir>: the embedded database, named in the CLI's terms when missing.
    if (url.startsWith('pglite:')) await requireEmbedded(command)
    await options.beforeOpening?.()
    return { via: 'direct', database: url, where: describeUrl(url) }
  }
  const dir = stateDir(dataDir)
  const database = embeddedUrl(dir)
  if (options.allowDevServer !== false) {
    const running = await currentHolder(dir)
    const server = running && (await reachDevServer(running))
    if (server)
      return { via: 'dev-server', server, where: `the dev server at ${server.url} (pid ${server.pid})` }
  }
  await options.beforeOpening?.()
  await requireEmbedded(command)
  const deadline = Date.now() + (options.waitMs ?? 15_000)
  let holder: Holder
  for (;;) {
    const got = await acquire(dir, { pid: process.pid, command, startedAt: new Date().toISOString() })
    if (!('heldBy' in got))
      return {
        via: 'direct',
        database,
        where: `embedded PGlite in ${displayPath(resolve(dir, 'pglite'))}`,
        lock: got,
      }
    holder = got.heldBy
    // A second dev server would only wait for the first to stop: say so at once.
    if (options.allowDevServer === false && holder.command === 'dev') break
    if (options.allowDevServer !== false) {
      const server = await reachDevServer(holder)
      if (server)
        return { via: 'dev-server', server, where: `the dev server at ${server.url} (pid ${server.pid})` }
    }
    if (Date.now() >= deadline) break
    await sleep(250)
  }
  if (holder.command === 'dev' && options.allowDevServer === false) {
    throw new CliError(`A dev server is already running on ${displayPath(dir)} as ${holderText(holder)}.`, {
      code: 'DATABASE_BUSY',
      exitCode: EXIT.DATABASE,
      hint: 'Use that one, stop it first, or pass --data-dir <dir> (or --memory) to run a second one.',
    })
  }
  throw new CliError(`The embedded database in ${displayPath(dir)} is in use by ${holderText(holder)}.`, {
    code: 'DATABASE_BUSY',
    exitCode: EXIT.DATABASE,
    hint: busyHint(dir),
  })
}

/**
 * The hint for a PostgreSQL server that cannot be used, by what went wrong: `sqlState` is
 * the server's answer (3D000 no such database, 28xxx credentials refused, 57P03 starting
 * up), undefined when nothing answered.
 */
export function unreachableHint(database: string | undefined, sqlState?: string): string | undefined {
  if (!database?.match(/^postgres(ql)?:/)) return undefined
  let at = 'the host and port in DATABASE_URL'
  let user = 'the user in DATABASE_URL'
  let name = 'in DATABASE_URL'
  try {
    const u = new URL(database)
    at = `${u.hostname || 'localhost'}:${u.port || '5432'}`
    if (u.username) user = `user "${decodeURIComponent(u.username)}"`
    const db = decodeURIComponent(u.pathname.slice(1))
    if (db || u.username) name = `"${db || decodeURIComponent(u.username)}"`
  } catch {}
  if (sqlState === SQLSTATE.INVALID_CATALOG_NAME)
    return (
      `The server at ${at} is up, but has no database ${name}. Create it (CREATE DATABASE, or ` +
      '`createdb`), or correct the database name in DATABASE_URL.'
    )
  if (inClass(sqlState, SQLSTATE_CLASS.INVALID_AUTHORIZATION))
    return (
      `The server at ${at} is up, but refused ${user}: check the user and password in ` +
      "DATABASE_URL, and that the server's pg_hba.conf lets that user in from here."
    )
  if (sqlState === SQLSTATE.CANNOT_CONNECT_NOW)
    return `The server at ${at} is starting up or shutting down: try again in a moment.`
  return (
    `Nothing usable answers at ${at} (from DATABASE_URL). Start PostgreSQL there ` +
    '(e.g. `docker run -d -p 5432:5432 -e POSTGRES_PASSWORD=postgres postgres:17`), correct DATABASE_URL, ' +
    'or unset it to use the embedded database in ./.sluice/pglite.'
  )
}
