import { PgBoss } from 'pg-boss'
import { sleep } from '../lib/stats.js'
import { payload } from './sluice.js'

export const BOSS_QUEUE = 'bench'

/** A pg-boss 12 instance on its own schema with maintenance and cron off (nothing runs beside the bench). */
export async function openBoss(url: string, schema: string): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schema,
    supervise: false,
    schedule: false,
    migrate: true,
    max: 10,
  })
  boss.on('error', () => {})
  await boss.start()
  await boss.createQueue(BOSS_QUEUE)
  return boss
}

/** Enqueues `n` jobs through `insert`, `slice` per call. */
export async function fillBoss(boss: PgBoss, n: number, slice: number): Promise<void> {
  for (let start = 0; start < n; start += slice) {
    const jobs = Array.from({ length: Math.min(slice, n - start) }, (_, i) => ({ data: payload(start + i) }))
    await boss.insert(BOSS_QUEUE, jobs)
  }
}

/**
 * `fetch` a batch, run it, `complete` it, until a fetch comes back empty or `capMs` has passed;
 * `parallel` loops at once. The cap keeps a run bounded should a fetch slow down with the backlog
 * (pg-boss 10's did: it sorted every due job of the queue).
 */
export async function fetchLoop(
  boss: PgBoss,
  batchSize: number,
  parallel: number,
  capMs: number,
  /** Told how long each fetch took (the claim, as the client sees it). */
  onFetch?: (ms: number) => void,
): Promise<number> {
  let handled = 0
  const until = performance.now() + capMs
  const loop = async (): Promise<void> => {
    while (performance.now() < until) {
      const started = performance.now()
      const jobs = await boss.fetch<{ n: number }>(BOSS_QUEUE, { batchSize })
      onFetch?.(performance.now() - started)
      if (jobs.length === 0) return
      for (const _job of jobs) handled++
      await boss.complete(
        BOSS_QUEUE,
        jobs.map((j) => j.id),
      )
    }
  }
  await Promise.all(Array.from({ length: parallel }, loop))
  return handled
}

export interface WorkLoopOptions {
  n: number
  batchSize: number
  /** pg-boss's `localConcurrency`: workers polling and running batches independently. */
  workers: number
  pollingIntervalSeconds: number
}

/**
 * pg-boss's own `work` loop as its docs advise for a backlog: `localConcurrency` workers,
 * `batchSize` jobs per fetch and `burstWhenBatchFull` (fetch again at once while batches come
 * back full, instead of waiting out the polling interval). pg-boss 12 completes a batch before
 * its worker fetches again; the run still ends only when `n` handlers ran and the database
 * shows `n` jobs completed.
 */
export async function workLoop(
  boss: PgBoss,
  count: (sql: string) => Promise<number>,
  schema: string,
  options: WorkLoopOptions,
): Promise<number> {
  let handled = 0
  await boss.work<{ n: number }>(
    BOSS_QUEUE,
    {
      batchSize: options.batchSize,
      localConcurrency: options.workers,
      burstWhenBatchFull: true,
      pollingIntervalSeconds: options.pollingIntervalSeconds,
    },
    async (jobs) => {
      handled += jobs.length
    },
  )
  while (handled < options.n) await sleep(5)
  while (
    (await count(
      `SELECT count(*)::int AS n FROM "${schema}".job WHERE name = '${BOSS_QUEUE}' AND state = 'completed'`,
    )) < options.n
  )
    await sleep(10)
  await boss.offWork(BOSS_QUEUE, { wait: true })
  return handled
}
