-- A job in the archive by its id (migration 0023: the archive keeps one row per group of jobs a
-- settle ended, in ranges of 1,024 ids): the rows of its range, read on the primary key; of those,
-- the one whose ids hold it (only that array read), unnested as the `archive` view unnests. The
-- newest first, should an id have been archived twice. Inlined where it is used (LANGUAGE sql,
-- one statement).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.archived_job(p_id bigint)
RETURNS SETOF :SLUICE_SCHEMA.archive
LANGUAGE sql
STABLE
AS $fn$
  SELECT x.id, g.queue, x.name, x.payload, x.priority, x.attempts, x.max_attempts, g.status, x.enqueued_at,
         x.duration_ms, g.finished_at, x.wait_ms, x.errors, g.invocation, x.result, g.bucket
  FROM :SLUICE_SCHEMA.archive_groups g
  CROSS JOIN LATERAL unnest(g.ids, g.names, g.payloads, g.priorities, g.attempts, g.max_attempts, g.enqueued_at,
                            g.durations_ms, g.waits_ms, g.errors, g.results)
    AS x(id, name, payload, priority, attempts, max_attempts, enqueued_at, duration_ms, wait_ms, errors, result)
  WHERE g.bucket = p_id >> 10 AND p_id = ANY (g.ids) AND x.id = p_id
  ORDER BY g.finished_at DESC
  LIMIT 1
$fn$;
