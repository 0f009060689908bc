import type { Queryable } from '../db/types.js'
import { type EnqueueResult, insert } from '../jobs/enqueue.js'
import type { NewJob } from '../sql/enqueue.js'
import { withWake } from '../sql/wake.js'
import { trackWakeup } from './pending.js'
import { type WakeOptions, wake } from './send.js'

/**
 * Writes the jobs (one statement) and, when this opened a new debounce window for a queue
 * with wake-ups on, wakes its drains without waiting (./pending.ts tracks the request). Jobs
 * enqueued inside a caller's transaction or not due yet wake nobody: a drain could not see them.
 */
export async function enqueueAndWake(
  on: Queryable,
  t: string,
  rows: readonly NewJob[],
  options: Readonly<WakeOptions>,
  inTransaction: boolean,
): Promise<EnqueueResult[]> {
  const queue = rows[0]?.queue
  const now = Date.now()
  const due = rows.some((row) => (row.runAt ? row.runAt.getTime() <= now : row.delayMs === 0))
  const check = options.onEnqueue && options.url !== undefined && !inTransaction && due && queue !== undefined
  const { results, wake: open } = await insert(
    on,
    t,
    rows,
    check ? (statement) => withWake(t, statement, queue, options.debounceMs) : undefined,
  )
  // Tracked, so that the platform entry point can see it out before the function freezes.
  if (open && queue && options.url) void trackWakeup(options.url, wake(options, queue))
  return results
}
