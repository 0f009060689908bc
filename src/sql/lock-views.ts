import type { Statement } from '../db/types.js'

/** Every lock Sluice holds as a row, as `sluice.inspect.locks()` returns them. */
export interface Locks {
  /** The database's clock. */
  now: string
  uniqueLocks: {
    key: string
    strategy: 'until-executed' | 'while-executing'
    state: 'queued' | 'executing'
    jobId: string
    /** The drain invocation holding it (while executing). */
    owner: string | null
    acquiredAt: string
    ageSeconds: number
    expiresAt: string
  }[]
  semaphores: {
    key: string
    limit: number
    /** Slots taken (jobs of the key queued or running in the jobs table). */
    taken: number
    /** The jobs of the key in the jobs table (the first 100 by id). */
    holders: string[]
    /** Jobs of the key waiting for a slot in the blocked table. */
    blocked: number
    expiresAt: string
  }[]
  queueLeases: {
    queue: string
    /** The single-consumer drain invocation holding the queue. */
    owner: string
    /** Since that invocation started (the lease is renewed by it, so no start of its own is kept), seconds. */
    ageSeconds: number | null
    expiresAt: string
    live: boolean
  }[]
}

/** Uniqueness locks (the oldest 500), semaphores and single-consumer queue leases, in one statement. */
export function locks(t: string): Statement {
  return {
    text: `SELECT to_json(now()) #>> '{}' AS now,
  (SELECT coalesce(json_agg(json_build_object(
      'key', u.key, 'strategy', u.strategy, 'state', u.state, 'jobId', u.job_id::text, 'owner', u.owner,
      'acquiredAt', u.acquired_at, 'ageSeconds', extract(epoch FROM now() - u.acquired_at)::float8,
      'expiresAt', u.expires_at) ORDER BY u.acquired_at, u.key), '[]'::json)
   FROM (SELECT * FROM ${t}.unique_locks ORDER BY acquired_at, key LIMIT 500) u) AS "uniqueLocks",
  (SELECT coalesce(json_agg(json_build_object(
      'key', s.key, 'limit', s.lim, 'taken', s.value,
      'holders', ARRAY(SELECT j.id::text FROM ${t}.jobs j WHERE j.concurrency_key = s.key ORDER BY j.id LIMIT 100),
      'blocked', (SELECT count(*) FROM ${t}.blocked b WHERE b.concurrency_key = s.key)::float8,
      'expiresAt', s.expires_at) ORDER BY s.key), '[]'::json)
   FROM (SELECT * FROM ${t}.semaphores ORDER BY key LIMIT 500) s) AS semaphores,
  (SELECT coalesce(json_agg(json_build_object(
      'queue', l.queue, 'owner', l.holder, 'ageSeconds', extract(epoch FROM now() - i.started_at)::float8,
      'expiresAt', l.expires_at, 'live', l.expires_at > now()) ORDER BY l.queue), '[]'::json)
   FROM ${t}.queue_leases l LEFT JOIN ${t}.invocations i ON i.id = l.holder) AS "queueLeases"`,
    values: [],
  }
}

/** Subscribers and the outbox, as `sluice.inspect.events()` returns them. */
export interface EventsView {
  now: string
  subscribers: {
    name: string
    pattern: string
    queue: string
    /** Events delivered to it (jobs enqueued) over the last hour. */
    deliveriesLastHour: number
    /** Events it has marked processed (kept until pruned). */
    processed: number
    lastDeliveryAt: string | null
  }[]
  /**
   * Events published over the last hour that reached at least one subscriber (distinct event
   * ids delivered), whether published directly or through the outbox. An event no subscriber
   * matched leaves no row and is not counted.
   */
  routedLastHour: number
  outbox: {
    pending: number
    /** Of the oldest event not published yet, seconds; 0 when none waits. */
    oldestPendingAgeSeconds: number
    /** Events the outbox relay published over the last hour. */
    publishedLastHour: number
  }
}

/** Subscribers with their deliveries, and the outbox's backlog, in one statement. */
export function eventsView(t: string): Statement {
  return {
    text: `SELECT to_json(now()) #>> '{}' AS now,
  (SELECT coalesce(json_agg(json_build_object(
      'name', s.name, 'pattern', s.pattern, 'queue', s.queue,
      'deliveriesLastHour', (SELECT count(*) FROM ${t}.event_deliveries d
                             WHERE d.subscriber = s.name AND d.delivered_at > now() - interval '1 hour')::float8,
      'processed', (SELECT count(*) FROM ${t}.processed_events p WHERE p.subscriber = s.name)::float8,
      'lastDeliveryAt', (SELECT max(d.delivered_at) FROM ${t}.event_deliveries d WHERE d.subscriber = s.name))
      ORDER BY s.name), '[]'::json)
   FROM ${t}.subscriptions s) AS subscribers,
  (SELECT count(DISTINCT d.event_id) FROM ${t}.event_deliveries d
   WHERE d.delivered_at > now() - interval '1 hour')::float8 AS "routedLastHour",
  (SELECT json_build_object(
      'pending', (SELECT count(*) FROM ${t}.outbox o WHERE o.published_at IS NULL)::float8,
      'oldestPendingAgeSeconds', coalesce((
        SELECT extract(epoch FROM now() - o.created_at) FROM ${t}.outbox o
        WHERE o.published_at IS NULL ORDER BY o.id LIMIT 1), 0)::float8,
      'publishedLastHour', (SELECT count(*) FROM ${t}.outbox o
                            WHERE o.published_at > now() - interval '1 hour')::float8)) AS outbox`,
    values: [],
  }
}
