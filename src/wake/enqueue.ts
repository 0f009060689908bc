import type { Queryable } from '../db/types.js'
import { type EnqueueResult, insert } from '../jobs/enqueue.js'
import { isDue, type NewJob } from '../sql/enqueue.js'
import { withWake } from '../sql/wake.js'
import { type WakeOptions, wakeSoon, wakesOnWrite } from './send.js'

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
  const due = rows.some((row) => isDue(row, now))
  const check = wakesOnWrite(options) && !inTransaction && due && queue !== undefined
  const { results, wake: open } = await insert(
    on,
    t,
    rows,
    check ? (statement) => withWake(t, statement, queue, options.debounceMs) : undefined,
  )
  if (open && queue) wakeSoon(options, queue)
  return results
}
