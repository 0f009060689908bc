-- Reads of admission control's state for operators (inspect.policies(), inspect.partitions(),
-- /metrics): what each policy and partition holds, and why a partition's next waiting job is not
-- running. Nothing here writes. Each read runs with JIT off: the planner cannot know how few
-- policies there are (their table is too small to be analysed) and would otherwise spend far
-- more compiling these plans than running them.

-- A partition's waiting jobs: due or scheduled, with attempts left, a lapsed lease counting as
-- waiting again; counted up to p_limit. Walks the admit index, which holds the partition's jobs
-- leased or not, passing those a lease holds.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_pending(p_policy text, p_partition text, p_limit integer)
RETURNS integer LANGUAGE sql STABLE
AS $fn$
  SELECT count(*)::integer FROM (
    SELECT 1 FROM :SLUICE_SCHEMA.jobs j
    WHERE j.policy = p_policy AND j.partition_key = p_partition
      AND (j.lease_token IS NULL OR j.lease_until <= now()) AND j.attempts < j.max_attempts
    LIMIT p_limit) w
$fn$;

-- A policy's waiting jobs, all partitions, counted up to p_limit. Ordered as the admit index is,
-- so that it is walked on it (a policy with no jobs costs nothing) rather than on the table.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_policy_pending(p_policy text, p_limit integer)
RETURNS integer LANGUAGE sql STABLE
AS $fn$
  SELECT count(*)::integer FROM (
    SELECT 1 FROM :SLUICE_SCHEMA.jobs j
    WHERE j.policy = p_policy AND (j.lease_token IS NULL OR j.lease_until <= now())
      AND j.attempts < j.max_attempts
    ORDER BY j.policy, j.partition_key, j.priority, j.run_at, j.id
    LIMIT p_limit) w
$fn$;

-- A wait in ms as a person reads it, rounded up: "2.3 s", "4.5 min", "2.0 h".
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_wait_text(p_ms double precision)
RETURNS text LANGUAGE sql IMMUTABLE
AS $fn$
  SELECT CASE WHEN p_ms < 60000 THEN to_char(ceil(p_ms / 100) / 10, 'FM9999990.0') || ' s'
              WHEN p_ms < 3600000 THEN to_char(ceil(p_ms / 6000) / 10, 'FM9999990.0') || ' min'
              ELSE to_char(ceil(p_ms / 360000) / 10, 'FM99999990.0') || ' h' END
$fn$;

-- A moment as ISO 8601 in UTC, whatever the session's time zone.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_iso(p_at timestamptz)
RETURNS text LANGUAGE sql IMMUTABLE
AS $fn$
  SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$fn$;

-- Until a bucket holding p_tokens now gains its next whole token (not past its burst), ms; null
-- for no throttle or a full bucket.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_next_token_ms(
  p_tokens double precision, p_burst double precision, p_rate double precision, p_per_ms bigint
)
RETURNS double precision LANGUAGE sql IMMUTABLE
AS $fn$
  SELECT CASE WHEN p_tokens IS NULL OR p_tokens >= p_burst THEN NULL
              ELSE ceil((least(p_burst, greatest(1, floor(p_tokens) + 1)) - p_tokens) * p_per_ms / p_rate) END
$fn$;

-- Why a waiting job is not running, from the state of the gates it meets, checked in the order
-- the claim meets them: the queue's (claim_open's, then its global cap last, as claim_room
-- bounds the room after the partition's gates), the partition's pause and slow-down, the job's
-- due time (p_not_due says it: a partition's "not due until", a job's own wording), the
-- partition's throttle and cap, then the policy's global cap. A slow-down is named before the
-- due time only when it ends last. Null: nothing here stops it. Shared by the partitions' view
-- and each job's reason (job_reason), so that both say the same thing in the same words.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_reason(
  p_queue_paused boolean, p_breaker_until timestamptz, p_held_until timestamptz,
  p_partition_paused boolean, p_slow_until timestamptz, p_due boolean, p_next_run timestamptz,
  p_not_due text, p_tokens double precision, p_next_token_ms double precision, p_cap integer,
  p_running integer, p_global_max integer, p_global_running integer, p_queue_cap integer,
  p_queue_running integer
)
RETURNS text LANGUAGE sql STABLE
AS $fn$
  SELECT CASE
    WHEN p_queue_paused THEN 'queue paused'
    WHEN p_breaker_until > now() THEN 'breaker open until ' || :SLUICE_SCHEMA.admission_iso(p_breaker_until)
    WHEN p_held_until > now() THEN 'queue held until ' || :SLUICE_SCHEMA.admission_iso(p_held_until)
    WHEN p_partition_paused THEN 'partition paused'
    WHEN p_slow_until > now() AND (p_due OR p_slow_until >= p_next_run)
      THEN 'slowed down until ' || :SLUICE_SCHEMA.admission_iso(p_slow_until)
    WHEN NOT p_due THEN p_not_due
    WHEN p_tokens < 1 THEN 'throttled: next token in ' || :SLUICE_SCHEMA.admission_wait_text(p_next_token_ms)
    WHEN p_cap <= p_running THEN format('partition at its cap %s/%s', p_running, p_cap)
    WHEN p_global_max <= p_global_running THEN format('global cap %s/%s', p_global_running, p_global_max)
    WHEN p_queue_cap <= p_queue_running THEN format('queue at its global cap %s/%s', p_queue_running, p_queue_cap)
  END
$fn$;

-- Every policy, by name: its queue and global cap, its partitions (how many, how many paused),
-- its waiting jobs (up to p_count_limit) and its running ones.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_policies(p_count_limit integer)
RETURNS TABLE (
  name text, queue text, global_max integer, partitions integer, pending integer, in_flight integer,
  paused_partitions integer
)
LANGUAGE sql STABLE
ROWS 16
SET jit = off
AS $fn$
  SELECT g.name, g.queue, g.global_max,
         (SELECT count(*)::integer FROM :SLUICE_SCHEMA.partitions p WHERE p.policy = g.name),
         :SLUICE_SCHEMA.admission_policy_pending(g.name, p_count_limit),
         (SELECT count(*)::integer FROM :SLUICE_SCHEMA.leased_jobs a
          WHERE a.policy = g.name AND a.lease_until > now()),
         (SELECT count(*)::integer FROM :SLUICE_SCHEMA.partitions p WHERE p.policy = g.name AND p.paused)
  FROM :SLUICE_SCHEMA.policies g
  ORDER BY g.name
$fn$;

-- A page of a policy's partitions in key order: counts (waiting up to p_count_limit), the gates'
-- state now, and `reason`, why the next waiting job is not running (admission_reason). A
-- partition whose jobs are all scheduled reports "not due" before the throttle and the caps
-- (which may well have opened by then). Null: nothing waits, or the next job is admissible now.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.admission_partitions(text, integer, integer, integer);

CREATE FUNCTION :SLUICE_SCHEMA.admission_partitions(
  p_policy text, p_limit integer, p_offset integer, p_count_limit integer
)
RETURNS TABLE (
  partition_key text, pending integer, in_flight integer, tokens double precision,
  ms_until_next_token double precision, cap integer, adaptive_cap double precision, ewma_lag_ms double precision,
  paused boolean, cap_override integer, slow_until timestamptz, last_enqueued_at timestamptz,
  last_admitted_at timestamptz, reason text
)
LANGUAGE sql STABLE
ROWS 100
SET jit = off
AS $fn$
  WITH page AS (
    SELECT p.*,
           CASE WHEN p.rate IS NOT NULL
                THEN :SLUICE_SCHEMA.admission_tokens(p.tokens, p.refilled_at, p.rate, p.per_ms, p.burst) END AS tokens_now,
           :SLUICE_SCHEMA.admission_cap(p.cap_override, p.max_in_flight, p.adaptive_cap) AS cap_now,
           :SLUICE_SCHEMA.admission_in_flight(p.policy, p.partition_key) AS running,
           :SLUICE_SCHEMA.admission_pending(p.policy, p.partition_key, p_count_limit) AS waiting
    FROM :SLUICE_SCHEMA.partitions p
    WHERE p.policy = p_policy
    ORDER BY p.partition_key
    LIMIT p_limit OFFSET p_offset
  ), s AS (
    SELECT page.*,
           -- A due job that no lease holds (the admit index).
           EXISTS (SELECT 1 FROM :SLUICE_SCHEMA.jobs j
                   WHERE j.policy = page.policy AND j.partition_key = page.partition_key
                     AND (j.lease_token IS NULL OR j.lease_until <= now())
                     AND j.run_at <= now() AND j.attempts < j.max_attempts)
             AS due,
           -- The earliest scheduled job (read only for a partition with none due), among the
           -- first p_count_limit of the partition.
           (SELECT min(w.run_at) FROM (
              SELECT j.run_at FROM :SLUICE_SCHEMA.jobs j
              WHERE j.policy = page.policy AND j.partition_key = page.partition_key
                AND j.attempts < j.max_attempts AND j.lease_token IS NULL
              LIMIT p_count_limit) w) AS next_run,
           :SLUICE_SCHEMA.admission_next_token_ms(page.tokens_now, page.burst, page.rate, page.per_ms) AS next_token_ms
    FROM page
  ), g AS (
    SELECT g.global_max,
           (SELECT count(*)::integer FROM :SLUICE_SCHEMA.leased_jobs a
            WHERE a.policy = g.name AND a.lease_until > now()) AS running
    FROM :SLUICE_SCHEMA.policies g WHERE g.name = p_policy
  ), q AS (
    SELECT c.name, c.paused, c.breaker_until, c.held_until, c.global_cap,
           CASE WHEN c.global_cap IS NOT NULL THEN (
             SELECT count(*)::integer FROM :SLUICE_SCHEMA.leased_jobs f
             WHERE f.queue = c.name AND f.lease_until > now()) END AS running
    FROM :SLUICE_SCHEMA.queues c WHERE c.name IN (SELECT page.queue FROM page)
  )
  SELECT s.partition_key, s.waiting, s.running, s.tokens_now, s.next_token_ms, s.cap_now, s.adaptive_cap,
         s.ewma_lag_ms, s.paused, s.cap_override, s.slow_until, s.last_enqueued_at, s.last_admitted_at,
         CASE WHEN s.waiting > 0 THEN :SLUICE_SCHEMA.admission_reason(
           q.paused, q.breaker_until, q.held_until, s.paused, s.slow_until, s.due, s.next_run,
           'not due until ' || :SLUICE_SCHEMA.admission_iso(s.next_run), s.tokens_now, s.next_token_ms,
           s.cap_now, s.running, g.global_max, g.running, q.global_cap, q.running) END
  FROM s
  LEFT JOIN g ON true
  LEFT JOIN q ON q.name = s.queue
  ORDER BY s.partition_key
$fn$;

-- The partitions /metrics exports: the p_limit most recently active (enqueued into or admitted
-- from), waiting jobs counted up to p_count_limit each.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.admission_partition_metrics(integer, integer);

CREATE FUNCTION :SLUICE_SCHEMA.admission_partition_metrics(p_limit integer, p_count_limit integer)
RETURNS TABLE (
  policy text, partition_key text, pending integer, in_flight integer, tokens double precision, cap integer,
  ewma_lag_ms double precision, paused boolean
)
LANGUAGE sql STABLE
ROWS 500
SET jit = off
AS $fn$
  SELECT p.policy, p.partition_key,
         :SLUICE_SCHEMA.admission_pending(p.policy, p.partition_key, p_count_limit),
         :SLUICE_SCHEMA.admission_in_flight(p.policy, p.partition_key),
         CASE WHEN p.rate IS NOT NULL
              THEN :SLUICE_SCHEMA.admission_tokens(p.tokens, p.refilled_at, p.rate, p.per_ms, p.burst) END,
         :SLUICE_SCHEMA.admission_cap(p.cap_override, p.max_in_flight, p.adaptive_cap),
         p.ewma_lag_ms, p.paused
  FROM :SLUICE_SCHEMA.partitions p
  ORDER BY greatest(p.last_enqueued_at, p.last_admitted_at) DESC NULLS LAST, p.policy, p.partition_key
  LIMIT p_limit
$fn$;
