import type pg from 'pg'

export interface ArchiveFill {
  /** How many archived jobs. */
  jobs: number
  /** Their ids: `start + 1 …`, or (without `start`) taken from the jobs sequence. */
  start?: number
  /** Spread over queues `q0 … q<queues - 1>` (job i in `q<i % queues>`), or all in `queue`. */
  queues?: number
  queue?: string
  name?: string
  /** How long ago the first job finished; the others follow evenly up to now. Default 1 day. */
  spanMs?: number
}

/**
 * Archived jobs as drains leave them (migration 0023): settled 200 at a time, one archive row per
 * settle, queue and range of 1,024 ids.
 */
export async function fillArchive(db: pg.Pool | pg.PoolClient, t: string, f: ArchiveFill): Promise<void> {
  const id =
    f.start === undefined ? `nextval(pg_get_serial_sequence('${t}.jobs', 'id'))` : `${f.start}::bigint + g`
  const queue = f.queues === undefined ? '$2::text' : `'q' || (g % ${f.queues})`
  await db.query(
    `WITH j AS (SELECT ${id} AS id, ${queue} AS queue, g FROM generate_series(1, $1::int) g)
INSERT INTO ${t}.archive_groups (bucket, finished_at, queue, status, invocation, ids, names, payloads, priorities,
                                 attempts, max_attempts, enqueued_at, durations_ms, waits_ms, errors, results)
SELECT id >> 10, now() - $4::bigint * interval '1 ms' * (1 - min(g)::float8 / $1::int), queue, 'completed',
       'drn_bench', array_agg(id), array_agg($3::text), array_agg(jsonb_build_object('n', g)),
       array_agg(16384::smallint), array_agg(1), array_agg(5), array_agg(now() - interval '1 day'),
       array_agg(3::bigint), array_agg(0::bigint), array_agg(NULL::jsonb), array_agg(NULL::jsonb)
FROM j
GROUP BY (g - 1) / 200, id >> 10, queue`,
    [f.jobs, f.queue ?? 'q0', f.name ?? 'noop', f.spanMs ?? 86_400_000],
  )
}
