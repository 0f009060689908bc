-- Why one job is not running (inspect.jobs(), inspect.job()): the first cause that holds it, in
-- the order the claim meets them. Nothing here writes.

-- A job of steps that is suspended (docs/steps.md): `sleeping until T`, `waiting for event <topic>
-- matching <match> until T`, `waiting for N child jobs` (several waits joined with "; "); null
-- for any other job.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.step_reason(p_job bigint, p_waiting integer, p_run_at timestamptz)
RETURNS text LANGUAGE sql STABLE
AS $fn$
  SELECT CASE
    WHEN coalesce(p_waiting, 0) > 0 THEN (
      SELECT string_agg(r.x, '; ' ORDER BY r.o) FROM (
        SELECT format('waiting for event %s matching %s until %s', s.topic, s.match::text,
                      :SLUICE_SCHEMA.admission_iso(s.wake_at)) AS x, s.seq AS o
        FROM :SLUICE_SCHEMA.job_steps s WHERE s.job_id = p_job AND s.kind = 'event' AND s.state = 'waiting'
        UNION ALL
        SELECT format('waiting for %s child job%s', count(*), CASE WHEN count(*) = 1 THEN '' ELSE 's' END), min(s.seq)
        FROM :SLUICE_SCHEMA.job_steps s WHERE s.job_id = p_job AND s.kind = 'invoke' AND s.state = 'waiting'
        HAVING count(*) > 0) r)
    WHEN p_run_at > now() AND EXISTS (
      SELECT 1 FROM :SLUICE_SCHEMA.job_steps s WHERE s.job_id = p_job AND s.kind = 'sleep' AND s.wake_at > now())
      THEN 'sleeping until ' || :SLUICE_SCHEMA.admission_iso(p_run_at)
  END
$fn$;

-- A job of the jobs table: running; out of attempts (maintenance buries it); then the gates of
-- its queue, its due time and its partition's admission gates, in the partitions' view's words
-- (admission_reason); then another job holding its while-executing key; then a single-consumer
-- queue's lease, which only its holder may claim under. Null when it is ready and nothing stops
-- it. Counts of running jobs are read only for the gates that cap them.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.job_reason(j :SLUICE_SCHEMA.jobs)
RETURNS text LANGUAGE sql STABLE
AS $fn$
  SELECT CASE
    WHEN j.lease_token IS NOT NULL AND j.lease_until > now()
      THEN 'running (lease until ' || :SLUICE_SCHEMA.admission_iso(j.lease_until) || ')'
    WHEN j.attempts >= j.max_attempts THEN 'out of attempts: maintenance moves it to the dead letters'
    ELSE coalesce(
      CASE WHEN j.lease_token IS NULL AND (j.run_at > now() OR j.waiting > 0)
           THEN :SLUICE_SCHEMA.step_reason(j.id, j.waiting, j.run_at) END,
      :SLUICE_SCHEMA.admission_reason(
        c.paused, c.breaker_until, c.held_until, p.paused, p.slow_until, j.run_at <= now(), j.run_at,
        CASE WHEN j.attempts > 0
             THEN format('retrying at %s (attempt %s of %s)', :SLUICE_SCHEMA.admission_iso(j.run_at),
                         j.attempts + 1, j.max_attempts)
             ELSE 'not due until ' || :SLUICE_SCHEMA.admission_iso(j.run_at) END,
        t.tokens_now,
        :SLUICE_SCHEMA.admission_next_token_ms(t.tokens_now, p.burst, p.rate, p.per_ms),
        :SLUICE_SCHEMA.admission_cap(p.cap_override, p.max_in_flight, p.adaptive_cap),
        CASE WHEN p.policy IS NOT NULL THEN :SLUICE_SCHEMA.admission_in_flight(p.policy, p.partition_key) END,
        g.global_max,
        CASE WHEN g.global_max IS NOT NULL THEN (
          SELECT count(*)::integer FROM :SLUICE_SCHEMA.leased_jobs a
          WHERE a.policy = g.name AND a.lease_until > now()) END,
        c.global_cap,
        CASE WHEN c.global_cap IS NOT NULL THEN (
          SELECT count(*)::integer FROM :SLUICE_SCHEMA.leased_jobs f
          WHERE f.queue = c.name AND f.lease_until > now()) END),
      CASE WHEN u.key IS NOT NULL
           THEN format('waiting for key %s (held by job %s until %s)', u.key, u.job_id,
                       :SLUICE_SCHEMA.admission_iso(u.expires_at)) END,
      CASE WHEN l.holder IS NOT NULL THEN 'held by single consumer ' || l.holder END)
  END
  FROM (SELECT 1) one
  LEFT JOIN :SLUICE_SCHEMA.queues c ON c.name = j.queue
  LEFT JOIN :SLUICE_SCHEMA.partitions p ON p.policy = j.policy AND p.partition_key = j.partition_key
  LEFT JOIN :SLUICE_SCHEMA.policies g ON g.name = j.policy
  LEFT JOIN LATERAL (
    SELECT CASE WHEN p.rate IS NOT NULL
                THEN :SLUICE_SCHEMA.admission_tokens(p.tokens, p.refilled_at, p.rate, p.per_ms, p.burst) END
  ) t(tokens_now) ON true
  LEFT JOIN :SLUICE_SCHEMA.queue_leases l ON c.single_consumer AND l.queue = j.queue AND l.expires_at > now()
  LEFT JOIN :SLUICE_SCHEMA.unique_locks u
    ON u.key = j.exclusive_key AND u.job_id <> j.id AND u.expires_at > now()
$fn$;

-- A job in the blocked table waits for a slot of its concurrency key's semaphore: how many of
-- the key's slots are taken (a semaphore row reaped meanwhile: its slots are being reconciled).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.blocked_reason(p_key text)
RETURNS text LANGUAGE sql STABLE
AS $fn$
  SELECT 'blocked behind key ' || p_key || coalesce(format(' (%s of %s slots taken)', s.value, s.lim), '')
  FROM (SELECT 1) one LEFT JOIN :SLUICE_SCHEMA.semaphores s ON s.key = p_key
$fn$;
