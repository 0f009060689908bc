/**
 * What durable steps cost (docs/steps.md), in one run on a fresh database:
 *
 * - **Steps**: `--jobs` jobs of `--steps` no-op steps each, drained to the end, against the same
 *   jobs without steps: steps per second, and per step the statements, the server CPU and the WAL
 *   the steps add (the difference between the two runs, divided by the steps).
 * - **Publish to resume**: `--waiters` jobs each waiting for its own event; the events are
 *   published one by one and each job records when it resumed. p50 and p95 with a drain polling
 *   every second, and with wake-ups: the publish statement makes the job due and says to wake its
 *   queue's drain, and a signed POST /drain (to a local HTTP app) runs it.
 *
 * - **Storage** (`--storage N`, instead of the above): N completed jobs of `--steps` steps each,
 *   then maintenance with a retention of 0 until the archive is empty: the step rows and the
 *   tables' sizes before and after, so that nothing is seen to grow without bound.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/steps.ts [--jobs 2000] [--steps 10] [--waiters 200]
 *   DATABASE_URL=postgres://… npx tsx bench/steps.ts --storage 100000
 */
import { parseArgs } from 'node:util'
import { provision } from './lib/database.js'
import { pool } from './lib/pg.js'
import { percentile, round } from './lib/stats.js'
import { drainRun, POLL_MS, type StepsConfig, storageRun, wakeRuns } from './lib/steps.js'

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    steps: { type: 'string', default: '10' },
    waiters: { type: 'string', default: '200' },
    storage: { type: 'string' },
  },
})
const cfg: StepsConfig = {
  jobs: Number(values.jobs),
  steps: Number(values.steps),
  waiters: Number(values.waiters),
}

async function main(): Promise<void> {
  const db = await provision((m) => process.stderr.write(`${m}\n`))
  const admin = pool(db.url, 1)
  try {
    if (values.storage !== undefined) {
      await storageRun(cfg, db.url, admin, Number(values.storage))
      return
    }
    const plain = await drainRun(cfg, db.url, admin, false)
    const stepped = await drainRun(cfg, db.url, admin, true)
    const steps = cfg.jobs * cfg.steps
    const per = (a: number | null, b: number | null): string =>
      a === null || b === null ? 'n/a' : String(round((a - b) / steps, 3))
    console.log(
      `Steps: ${cfg.jobs} jobs × ${cfg.steps} no-op steps, drained to the end (concurrency 10, batch 50)`,
    )
    console.log(`  without steps: ${round(plain.ms)} ms, ${plain.statements} statements`)
    console.log(`  with steps:    ${round(stepped.ms)} ms, ${stepped.statements} statements`)
    console.log(`  steps per second: ${Math.round((steps / stepped.ms) * 1000)}`)
    console.log(
      `  per step: ${round((stepped.statements - plain.statements) / steps, 3)} statements, ` +
        `${per(stepped.serverMs === null ? null : stepped.serverMs * 1000, plain.serverMs === null ? null : plain.serverMs * 1000)} µs server CPU, ` +
        `${round((stepped.walBytes - plain.walBytes) / steps, 1)} B WAL`,
    )
    const { polled, woken } = await wakeRuns(cfg, db.url)
    console.log(`Publish to resume: ${cfg.waiters} waiting jobs, one event each, published 50-250 ms apart`)
    for (const [label, values] of [
      [`a drain polling every ${POLL_MS} ms`, polled],
      ['wake-ups (the publish makes the job due and POSTs /drain; debounce 0)', woken],
    ] as const) {
      console.log(
        `  ${label}: p50 ${percentile(values, 50)} ms, p95 ${percentile(values, 95)} ms, max ${Math.max(...values)} ms`,
      )
    }
  } finally {
    await admin.end()
    await db.release()
  }
}

await main()
