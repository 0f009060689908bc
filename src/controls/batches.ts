import type { AnyJob } from '../jobs/define.js'
import type { BatchCallbackRows } from '../sql/batches.js'

export type { BatchRow } from '../sql/batches.js'

export interface BatchCallbacks {
  /** Enqueued once when every job of the batch has completed or been dead-lettered. */
  onFinish?: AnyJob
  /** Enqueued once, at the finish, when no job was dead-lettered. */
  onSuccess?: AnyJob
  /** Enqueued once, at the finish, when at least one job was dead-lettered. */
  onDiscard?: AnyJob
}

/** The callbacks as the batch row stores them. */
export function callbackRows(callbacks: BatchCallbacks): BatchCallbackRows {
  const rows: BatchCallbackRows = {}
  for (const key of ['onFinish', 'onSuccess', 'onDiscard'] as const) {
    const job = callbacks[key]
    if (job)
      rows[key] = {
        name: job.name,
        queue: job.queue,
        priority: job.priority,
        maxAttempts: job.retry.maxAttempts,
      }
  }
  return rows
}
