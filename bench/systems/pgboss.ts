import PgBoss from 'pg-boss'
import { sleep } from '../lib/stats.js'
import { payload } from './sluice.js'

export const BOSS_QUEUE = 'bench'

/** A pg-boss 10 instance on its own schema with maintenance and cron off (nothing runs beside the bench). */
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
    const jobs = Array.from({ length: Math.min(slice, n - start) }, (_, i) => ({
      name: BOSS_QUEUE,
      data: payload(start + i),
    }))
    await boss.insert(jobs)
  }
}

/**
 * `fetch` a batch, run it, `complete` it, until a fetch comes back empty or `capMs` has passed;
 * `parallel` loops at once. pg-boss 10's fetch sorts every due job of the queue (its index is on
 * (name, start_after), its ORDER BY priority, created_on), so a large backlog makes each fetch
 * slow and the cap keeps the run bounded.
 */
export async function fetchLoop(
  boss: PgBoss,
  batchSize: number,
  parallel: number,
  capMs: number,
): Promise<number> {
  let handled = 0
  const until = performance.now() + capMs
  const loop = async (): Promise<void> => {
    while (performance.now() < until) {
      const jobs = await boss.fetch<{ n: number }>(BOSS_QUEUE, { batchSize })
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

/**
 * pg-boss's own `work` loop: `workers` workers with `batchSize` jobs per fetch, polling every
 * `pollingIntervalSeconds` (pg-boss 10's minimum is 0.5 s). Completion is fire-and-forget in
 * pg-boss, so the run ends when `n` handlers ran and the database shows `n` jobs completed.
 */
export async function workLoop(
  boss: PgBoss,
  count: (sql: string) => Promise<number>,
  schema: string,
  options: { n: number; batchSize: number; workers: number; pollingIntervalSeconds: number },
): Promise<number> {
  let handled = 0
  for (let i = 0; i < options.workers; i++) {
    await boss.work<{ n: number }>(
      BOSS_QUEUE,
      { batchSize: options.batchSize, pollingIntervalSeconds: options.pollingIntervalSeconds },
      async (jobs) => {
        handled += jobs.length
      },
    )
  }
  while (handled < options.n) await sleep(5)
  while (
    (await count(
      `SELECT count(*)::int AS n FROM "${schema}".job WHERE name = '${BOSS_QUEUE}' AND state = 'completed'`,
    )) < options.n
  )
    await sleep(10)
  await boss.offWork(BOSS_QUEUE)
  return handled
}
