import * as z from 'zod'
import type { JobRun } from '../../drain/options.js'
import { ConfigError } from '../../errors.js'
import type { Sluice } from '../../sluice.js'
import { intFlag, type Parsed, validate } from '../args.js'
import { noPositionals } from '../command.js'
import { banner } from '../dev/banner.js'
import { startDrainLoop, startMaintenance } from '../dev/loop.js'
import { devApp, devHosts, type Listening, listen, newToken, nodeServer } from '../dev/server.js'
import { CliError, EXIT, UsageError } from '../errors.js'
import { formatRun } from '../job-log.js'
import { displayPath, findConfig, loadApp } from '../load-config.js'
import { acquire, type Lock } from '../lock.js'
import { color, write } from '../output.js'
import { checkDatabaseUrl, chooseTarget, describeUrl, stateDir } from '../target.js'
import { COMMANDS } from './index.js'

export const devHelp = {
  name: 'dev',
  summary: 'run Sluice locally: HTTP app, drain loop and maintenance (embedded PGlite unless DATABASE_URL)',
  usage: 'sluice dev [--port n] [--host h] [--memory] [--data-dir dir] [--config file]',
  help: `Migrates, runs the app's setup(), then serves Sluice's HTTP API (authentication off), drains
in this process (at once after each enqueue or publish through the server, otherwise every second) and
runs maintenance every 30 s. Logs one line per job run. Ctrl-C (or SIGTERM) stops claiming,
lets the jobs in progress finish, closes the database and exits 0.

Without DATABASE_URL the database is embedded PGlite in ./.sluice/pglite, kept across
restarts (delete .sluice to start over). PGlite serves one process: while dev runs, the other
sluice commands run in this directory go through it.

  --port n        port to serve on (default: PORT, else 3000; 0 picks a free one)
  --host h        address to serve on (default 127.0.0.1)
  --memory        an in-memory database instead, gone when dev stops
  --data-dir dir  where the embedded database and lock file live (default ./.sluice)`,
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    memory: { type: 'boolean' },
  },
} as const

const POLL_MS = 1_000
const MAINTAIN_MS = 30_000

const flags = z.object({
  port: intFlag(0, 65_535).optional(),
  host: z.string().min(1).max(255).optional(),
  memory: z.boolean().optional(),
})

/** How to run the CLI from here, with the --data-dir this server uses when it is not the default. */
function cliInvocation(dataDir: string | undefined): string {
  const script = process.argv[1] ?? ''
  const cli = /\.[cm]?ts$/.test(script) ? `npx tsx ${displayPath(script)}` : 'npx sluice'
  return dataDir ? `${cli} --data-dir ${displayPath(stateDir(dataDir))}` : cli
}

const log = (line: string): void => void process.stdout.write(`${line}\n`)
const warn = (line: string): void => void process.stderr.write(`${line}\n`)
const stamp = (): string => color.dim(new Date().toISOString().slice(11, 23))

/** `sluice dev`: runs until SIGINT or SIGTERM; resolves with the exit code. */
export async function runDev(parsed: Parsed): Promise<number> {
  noPositionals('dev', parsed)
  if (parsed.globals.json) throw new UsageError('`sluice dev` does not take --json: it runs until stopped.')
  const v = validate('dev', flags, parsed.values)
  const port =
    v.port ??
    validate('dev', z.object({ PORT: intFlag(0, 65_535).default(3000) }), {
      PORT: process.env.PORT || undefined,
    }).PORT
  const host = v.host ?? '127.0.0.1'
  const configPath = await findConfig(parsed.globals.config)
  // A missing optional peer is said before a database is opened, not as a failed listen.
  await nodeServer().catch((error: unknown) => {
    if (!(error instanceof ConfigError)) throw error
    throw new CliError(error.message.replace(/: install it with .*$/, '.'), {
      code: 'INVALID_CONFIG',
      exitCode: EXIT.USAGE,
      hint: 'Install it: `npm install -D @hono/node-server`.',
    })
  })

  // Stop requests are taken from the start: an interrupted first start must not leave a
  // half-initialised database behind, so startup completes and then shuts down cleanly.
  let requested: string | undefined
  let onStop: (() => void) | undefined
  const stopped = new Promise<void>((resolve) => {
    onStop = resolve
  })
  let lock: Lock | undefined
  /** What a second signal does before quitting: end the drain invocation in progress. */
  let quit: (() => Promise<void>) | undefined
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!requested) {
      requested = signal
      warn(`\n${signal}: stopping. Jobs in progress finish first (press Ctrl-C again to quit at once).`)
      onStop?.()
      return
    }
    warn('Quitting now: jobs that were running are retried once their lease runs out.')
    const bounded = new Promise((resolve) => setTimeout(resolve, 3_000).unref())
    void Promise.race([quit?.().catch(() => {}), bounded]).finally(() => {
      lock?.releaseSync()
      process.exit(130)
    })
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  let database: string
  let where: string
  const dir = stateDir(parsed.globals.dataDir)
  if (process.env.DATABASE_URL) {
    database = checkDatabaseUrl(process.env.DATABASE_URL)
    where = describeUrl(database)
    // Not needed for the database, but lets commands without DATABASE_URL find this server.
    const got = await acquire(dir, { pid: process.pid, command: 'dev', startedAt: new Date().toISOString() })
    if ('heldBy' in got)
      warn(
        `Note: ${displayPath(dir)} is held by pid ${got.heldBy.pid}; commands run here will not reach this server.`,
      )
    else lock = got
  } else {
    const target = await chooseTarget('dev', parsed.globals.dataDir, { allowDevServer: false, waitMs: 5_000 })
    if (target.via !== 'direct') throw new CliError('Unexpected dev server target.')
    lock = target.lock
    database = v.memory ? 'pglite:memory' : target.database
    where = v.memory ? 'in-memory PGlite (gone when dev stops)' : `${target.where} (kept across restarts)`
  }

  let sluice: Sluice | undefined
  let server: Listening | undefined
  try {
    warn(color.dim(`Starting: ${where}…`, process.stderr))
    const app = await loadApp(configPath, { database })
    sluice = app.sluice
    const migrated = await sluice.migrate()
    if (app.setup) await app.setup(sluice)
    if (requested) return 0

    const logRun = (run: JobRun): void => log(formatRun(run))
    const loop = startDrainLoop(sluice, {
      pollMs: POLL_MS,
      maxJobs: sluice.config.drain.concurrency,
      onJob: logRun,
      onError: (error, retryInMs) =>
        warn(
          `${stamp()}  drain failed: ${(error as Error).message ?? error}; trying again in ${retryInMs / 1000} s`,
        ),
    })
    quit = () => loop.abandon()
    const base = sluice
    // What the HTTP routes and the commands run through this server use: enqueues and
    // publishes wake the loop, and every drain's runs are logged here.
    const served: Sluice = {
      ...base,
      async enqueue(job, input, options) {
        const result = await base.enqueue(job, input, options)
        loop.wake()
        return result
      },
      async enqueueMany(job, inputs, options) {
        const result = await base.enqueueMany(job, inputs, options)
        loop.wake()
        return result
      },
      async publish(topic, payload, options) {
        const result = await base.publish(topic, payload, options)
        if (result.jobs > 0) loop.wake()
        return result
      },
      drain: (options = {}) =>
        base.drain({
          ...options,
          onJob: (run) => {
            logRun(run)
            options.onJob?.(run)
          },
        }),
    }
    const maintenance = startMaintenance(sluice, MAINTAIN_MS, (summary) =>
      log(`${stamp()}  maintain: ${summary}`),
    )
    const token = newToken()
    try {
      server = await listen(
        (listening) =>
          devApp({
            sluice: served,
            context: {
              sluice: served,
              app: { ...app, sluice: served },
              where: `${where}, via this dev server`,
            },
            commands: COMMANDS,
            token,
            allowedHosts: devHosts(host, listening),
            onError: (error) =>
              warn(`${stamp()}  ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
          }),
        host,
        port,
      )
    } catch (error) {
      await loop.stop()
      await maintenance.stop()
      const code = (error as NodeJS.ErrnoException).code
      throw new CliError(`Cannot serve on ${host}:${port}: ${(error as Error).message}`, {
        code: 'LISTEN_FAILED',
        exitCode: EXIT.FAILED,
        hint:
          code === 'EADDRINUSE'
            ? `Something else uses port ${port}: stop it, or pick another port with PORT=3001 (or --port 0 for any free one).`
            : 'Check --host and --port.',
      })
    }
    await lock?.update({ command: 'dev', url: server.localUrl, token, config: configPath })
    await write(
      process.stdout,
      banner({
        sluice,
        configShown: displayPath(configPath),
        database: where,
        cli: cliInvocation(parsed.globals.dataDir),
        url: server.url,
        version: migrated.version,
        samples: app.samples,
        pollMs: POLL_MS,
        maintainMs: MAINTAIN_MS,
        registered: lock !== undefined,
      }),
    )

    await stopped
    const closing = server.close()
    await loop.stop()
    await maintenance.stop()
    await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 10_000).unref())])
    return 0
  } finally {
    await sluice?.close().catch(() => {})
    await lock?.release()
    if (requested) warn('Stopped.')
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}
