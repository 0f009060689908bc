import { Logger, makeWorkerUtils, runMigrations, runOnce, type WorkerUtils } from 'graphile-worker'
import pg from 'pg'
import { payload } from './sluice.js'

const { Pool } = pg
const TASK = 'noop'

/** graphile-worker's errors and warnings, kept rather than printed (a run that lost jobs shows them). */
export const graphileErrors: string[] = []
export const silentLogger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') graphileErrors.push(`${level}: ${message}`)
})

/** graphile-worker's worker options, as `preset.worker` takes them. */
export interface GraphileWorkerConfig {
  concurrentJobs: number
  maxPoolSize?: number
  localQueue?: { size: number }
  completeJobBatchDelay?: number
  failJobBatchDelay?: number
}

export async function migrateGraphile(url: string, schema: string): Promise<void> {
  await runMigrations({ connectionString: url, schema, logger: silentLogger })
}

/**
 * A pool for graphile-worker, with the error handlers it checks for on pools it is given.
 * With `onClaim`, every statement that takes jobs (its text locks rows with SKIP LOCKED) is
 * timed as the client sees it, round trip included, like Sluice's onQuery hook does.
 */
export function graphilePool(url: string, max: number, onClaim?: (ms: number) => void): pg.Pool {
  const p = new Pool({ connectionString: url, max })
  p.on('error', () => {})
  p.on('connect', (client) => {
    client.on('error', () => {})
    if (onClaim) timeClaims(client, onClaim)
  })
  return p
}

function timeClaims(client: pg.PoolClient, onClaim: (ms: number) => void): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  ;(client as { query: unknown }).query = (...args: unknown[]): unknown => {
    const first = args[0] as string | { text?: string } | undefined
    const text = typeof first === 'string' ? first : (first?.text ?? '')
    const started = performance.now()
    const result = query(...args)
    if (/skip locked/i.test(text) && result instanceof Promise) {
      result.then(
        () => onClaim(performance.now() - started),
        () => {},
      )
    }
    return result
  }
}

/** Enqueues `n` jobs through WorkerUtils.addJobs, `slice` per call. */
export async function addJobsLoop(utils: WorkerUtils, n: number, slice: number): Promise<void> {
  for (let start = 0; start < n; start += slice) {
    const specs = Array.from({ length: Math.min(slice, n - start) }, (_, i) => ({
      identifier: TASK,
      payload: payload(start + i),
    }))
    await utils.addJobs(specs)
  }
}

export async function graphileUtils(pgPool: pg.Pool, schema: string): Promise<WorkerUtils> {
  const utils = await makeWorkerUtils({ pgPool, schema, logger: silentLogger })
  await utils.migrate()
  return utils
}

export async function fillGraphile(url: string, schema: string, n: number, slice: number): Promise<void> {
  const utils = await makeWorkerUtils({ connectionString: url, schema, logger: silentLogger })
  try {
    await utils.migrate()
    await addJobsLoop(utils, n, slice)
  } finally {
    await utils.release()
  }
}

/**
 * Runs graphile-worker's `runOnce` (work until no job is left) with a no-op task; returns the
 * run count. The pool is the caller's (sized like graphile's own, `maxPoolSize` or 10) so its
 * connections outlive the run and their CPU time can be read afterwards.
 */
export async function drainGraphile(
  pgPool: pg.Pool,
  schema: string,
  config: GraphileWorkerConfig,
): Promise<number> {
  let handled = 0
  await runOnce({
    pgPool,
    schema,
    logger: silentLogger,
    noHandleSignals: true,
    taskList: {
      [TASK]: async () => {
        handled++
      },
    },
    preset: { worker: { ...config, schema } },
  })
  return handled
}
