import type { Queryable } from '../db/types.js'
import { count, type MaintenanceOptions, type MaintenanceTask } from '../maintain/maintain.js'
import { pruneOutbox, relayOutbox } from '../sql/outbox.js'
import { pruneProcessedEvents, type SubscriptionRow, syncSubscriptions } from '../sql/subscriptions.js'
import type { EventOptions } from './options.js'
import type { AnySubscriber } from './subscriber.js'

export function subscriptionRows(subscribers: readonly AnySubscriber[]): SubscriptionRow[] {
  return subscribers.map((s) => ({
    name: s.name,
    pattern: s.subscriber.topic,
    regex: s.subscriber.regex,
    queue: s.queue,
    priority: s.priority,
    maxAttempts: s.retry.maxAttempts,
    admission: s.subscriber.admission ?? null,
  }))
}

/** Writes the subscriptions from code, removing those no longer there. Returns the rows changed. */
export async function writeSubscriptions(
  db: Queryable,
  t: string,
  subscribers: readonly AnySubscriber[],
): Promise<number> {
  return count(db, syncSubscriptions(t, subscriptionRows(subscribers)))
}

/**
 * Relays pending outbox entries in batches of `batchSize`, at most `maxBatches` statements,
 * stopping at the first batch that is not full. Returns the entries relayed.
 */
export async function relayPending(
  db: Queryable,
  t: string,
  batchSize: number,
  maxBatches: number,
): Promise<number> {
  let relayed = 0
  for (let i = 0; i < maxBatches; i++) {
    const { rows } = await db.query<{ entries: number }>(relayOutbox(t, batchSize))
    const entries = rows[0]?.entries ?? 0
    relayed += entries
    if (entries < batchSize) break
  }
  return relayed
}

/** Maintenance for the event bus: subscriptions sync, outbox relay, retention. */
export function eventTasks(
  maintenance: MaintenanceOptions,
  events: EventOptions,
  subscribers: readonly AnySubscriber[] | undefined,
): MaintenanceTask[] {
  const every = maintenance.intervalMs
  const tasks: MaintenanceTask[] = []
  if (subscribers) {
    tasks.push({
      name: 'sync-subscriptions',
      intervalMs: every,
      run: ({ db, t }) => writeSubscriptions(db, t, subscribers),
    })
  }
  tasks.push(
    {
      // The outbox's latency is this interval when no drain runs: every maintenance call that finds it due.
      name: 'relay-outbox',
      intervalMs: Math.min(every, 10_000),
      run: ({ db, t }) => relayPending(db, t, events.relayBatchSize, events.relayBatchesPerRun),
    },
    {
      name: 'prune-outbox',
      intervalMs: every,
      run: ({ db, t }) => count(db, pruneOutbox(t, events.outboxRetentionMs, maintenance.batchSize)),
    },
    {
      name: 'prune-processed-events',
      intervalMs: every,
      run: ({ db, t }) =>
        count(db, pruneProcessedEvents(t, events.processedRetentionMs, maintenance.batchSize)),
    },
  )
  return tasks
}
