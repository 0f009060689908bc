import { count, type MaintenanceOptions, type MaintenanceTask } from '../maintain/maintain.js'
import { pruneIdlePartitions } from '../sql/admission.js'
import { pruneBatches } from '../sql/batches.js'
import { pruneStats, reapLocks, reapQueueLeases, reconcileSemaphores } from '../sql/locks.js'
import { syncQueues } from '../sql/queues.js'
import { pruneRecurringRuns } from '../sql/recurring.js'
import type { QueueSettings } from './queues.js'
import { type RecurringTask, runRecurring } from './recurring.js'

/** How long an admission partition stays without jobs or activity before maintenance deletes its row. */
export const IDLE_PARTITION_MS = 3_600_000

/** Maintenance for the job controls: settings sync, lock and slot recovery, retention. */
export function controlTasks(
  options: MaintenanceOptions,
  queues: readonly QueueSettings[],
  recurring: readonly RecurringTask[] | undefined,
  maxPayloadBytes: number,
): MaintenanceTask[] {
  const every = options.intervalMs
  const recurringTask: MaintenanceTask = {
    // Slots are minutes apart at the finest; run on every maintenance call that finds it due.
    name: 'recurring',
    intervalMs: Math.min(every, 10_000),
    run: ({ db, t }) => runRecurring(db, t, recurring ?? [], maxPayloadBytes),
  }
  return [
    // Only a deployment that declares its recurring tasks syncs them (and removes the others).
    ...(recurring ? [recurringTask] : []),
    {
      name: 'prune-recurring-runs',
      intervalMs: every,
      run: ({ db, t }) => count(db, pruneRecurringRuns(t, options.statsRetentionMs, options.batchSize)),
    },
    {
      name: 'sync-queues',
      intervalMs: every,
      run: async ({ db, t }) => (await db.query(syncQueues(t, queues))).rowCount,
    },
    {
      name: 'reconcile-semaphores',
      intervalMs: every,
      run: ({ db, t }) => count(db, reconcileSemaphores(t, options.batchSize)),
    },
    { name: 'reap-locks', intervalMs: every, run: ({ db, t }) => count(db, reapLocks(t, options.batchSize)) },
    { name: 'reap-queue-leases', intervalMs: every, run: ({ db, t }) => count(db, reapQueueLeases(t)) },
    {
      name: 'prune-batches',
      intervalMs: every,
      run: ({ db, t }) => count(db, pruneBatches(t, options.batchRetentionMs, options.batchSize)),
    },
    {
      // Admission partitions with no job and nothing happening for an hour.
      name: 'prune-partitions',
      intervalMs: every,
      run: ({ db, t }) => count(db, pruneIdlePartitions(t, IDLE_PARTITION_MS, options.batchSize)),
    },
    {
      name: 'prune-stats',
      intervalMs: every,
      run: ({ db, t }) => count(db, pruneStats(t, options.statsRetentionMs, options.batchSize)),
    },
  ]
}
