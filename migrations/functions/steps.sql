-- Durable steps (docs/steps.md). A job's steps are rows of job_steps, keyed by (job, seq): seq is
-- the step's position in the order the handler calls them. Every write by a running job is
-- guarded by its lease token, so a run whose lease was lost records nothing. Waits (event waits,
-- invoked children) count in jobs.waiting; whatever resolves the last one makes the job due.
--
-- Lock order: a step row before its job's row, and job rows in id order. Publish (wake_event_waits)
-- and settles (steps_children_ended) both follow it, so they never wait on each other in a cycle.

-- A finished step (completed, or failed: its function threw), written once the step has its
-- result. A failed step's row is rewritten by its next run (attempts counted); a completed one
-- never. The job's row is held FOR SHARE with its token: a drain that took the job over after a
-- lost lease waits for this write, and a write after the take-over finds no row and records
-- nothing. False when nothing was recorded. plpgsql, so that a drain's backend plans it once.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.step_record(
  p_job bigint, p_token uuid, p_seq integer, p_name text, p_kind text, p_state text, p_result jsonb,
  p_error jsonb, p_started_at timestamptz, p_wake_at timestamptz
)
RETURNS boolean LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_n integer;
BEGIN
  WITH held AS (
    SELECT j.id FROM :SLUICE_SCHEMA.jobs j WHERE j.id = p_job AND j.lease_token = p_token FOR SHARE
  )
  INSERT INTO :SLUICE_SCHEMA.job_steps AS s (job_id, seq, name, kind, state, result, error, started_at, finished_at,
                                              wake_at)
  SELECT held.id, p_seq, p_name, p_kind, p_state, p_result, p_error, p_started_at, now(), p_wake_at FROM held
  ON CONFLICT (job_id, seq) DO UPDATE
  SET state = excluded.state, result = excluded.result, error = excluded.error, attempts = s.attempts + 1,
      started_at = excluded.started_at, finished_at = excluded.finished_at, wake_at = excluded.wake_at
  WHERE s.state = 'failed' AND s.kind = 'run' AND s.name = excluded.name;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN v_n > 0;
END
$fn$;

-- Ends a run that cannot go on now (a sleep, an open wait) or that made progress up to the
-- drain's deadline: the job goes back unleased with its attempt uncounted, due at p_until (the
-- end of its sleeps; now when null), or, while waits are open, at the earliest timeout among them
-- (far in the future when none has one), read from the job's own steps, whichever run recorded
-- them. Its while-executing lock goes and its until-executed lock is queued again, as for a
-- hand-back. The job keeps its concurrency slot. Returns when the job is due next; no row when
-- the lease was lost.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.step_suspend(p_job bigint, p_token uuid, p_until timestamptz)
RETURNS TABLE (run_at timestamptz, waiting integer)
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH back AS (
    UPDATE :SLUICE_SCHEMA.jobs j
    SET lease_token = NULL, leased_by = NULL, attempts = greatest(j.attempts - 1, 0),
        -- Its open waits are counted in jobs.waiting, and read from its steps too: a dead letter
        -- retried while a wait of its was open comes back with no count.
        run_at = CASE WHEN coalesce(j.waiting, 0) > 0 OR EXISTS (
                        SELECT 1 FROM :SLUICE_SCHEMA.job_steps s WHERE s.job_id = j.id AND s.state = 'waiting')
                      THEN coalesce((SELECT min(s.wake_at) FROM :SLUICE_SCHEMA.job_steps s
                                     WHERE s.job_id = j.id AND s.state = 'waiting'),
                                    :SLUICE_SCHEMA.steps_never())
                      ELSE greatest(coalesce(p_until, now()), now()) END
    WHERE j.id = p_job AND j.lease_token = p_token
    RETURNING j.id, j.unique_key, j.exclusive_key, j.run_at, j.waiting
  ), unlocked AS (
    UPDATE :SLUICE_SCHEMA.unique_locks u SET state = 'queued', owner = NULL
    FROM back WHERE u.key = back.unique_key AND u.job_id = back.id
    RETURNING 1
  ), dropped AS (
    DELETE FROM :SLUICE_SCHEMA.unique_locks u USING back
    WHERE u.key = back.exclusive_key AND u.job_id = back.id
    RETURNING 1
  )
  SELECT back.run_at, coalesce(back.waiting, 0) FROM back;
END
$fn$;

-- When a job waits with no timeout: due never, in practice (a date every client can print).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.steps_never()
RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT '9999-12-31T00:00:00Z'::timestamptz
$fn$;

-- The advisory lock that orders event waits being recorded against publishes: a publish holds
-- it shared, a wait being recorded exclusively (see step_wait_event).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.event_waits_lock()
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT hashtextextended(':SLUICE_SCHEMA.event_waits', 0)
$fn$;

-- An event as a wait's result: the envelope subscribers get.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.event_envelope(
  p_topic text, p_event_id text, p_payload jsonb, p_headers jsonb, p_at timestamptz
)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT jsonb_build_object('topic', p_topic, 'eventId', p_event_id, 'payload', p_payload, 'headers', p_headers,
                            'publishedAt', p_at)
$fn$;

-- Records an event wait (ctx.waitForEvent). The event may already be here: one published since
-- the start of this run (the claim that took it) is looked for in the event log first, and taken
-- when found, so an event published after the job started but before its wait was recorded is
-- not lost. Else the step waits, and the job with it. The exclusive advisory lock orders this
-- against every publish (which holds it shared, then looks for waits with a fresh snapshot):
-- either the publish comes first and its event is in the log when this looks, or this comes
-- first and the publish finds the wait. p_topic is the pattern; p_regex matches it when it has
-- wildcards, and is null when it has none (waits are then found by equality). Returns the step's state
-- ('completed' with the event, or 'waiting'); no row when the lease was lost.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.step_wait_event(
  p_job bigint, p_token uuid, p_seq integer, p_name text, p_topic text, p_regex text, p_match jsonb,
  p_timeout timestamptz
)
RETURNS TABLE (state text, result jsonb)
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_since timestamptz;
  v_event jsonb;
BEGIN
  PERFORM pg_advisory_xact_lock(:SLUICE_SCHEMA.event_waits_lock());
  SELECT coalesce(j.started_at, now()) INTO v_since
  FROM :SLUICE_SCHEMA.jobs j WHERE j.id = p_job AND j.lease_token = p_token FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT :SLUICE_SCHEMA.event_envelope(e.topic, e.event_id, e.payload, e.headers, e.published_at) INTO v_event
  FROM :SLUICE_SCHEMA.event_log e
  WHERE e.logged_at >= v_since
    AND ((p_regex IS NULL AND e.topic = p_topic) OR (p_regex IS NOT NULL AND ('.' || e.topic) ~ p_regex))
    AND (p_match = '{}'::jsonb OR e.payload @> p_match)
  ORDER BY e.logged_at
  LIMIT 1;
  IF v_event IS NOT NULL THEN
    INSERT INTO :SLUICE_SCHEMA.job_steps (job_id, seq, name, kind, state, result, finished_at, wake_at, topic,
                                          regex, match)
    VALUES (p_job, p_seq, p_name, 'event', 'completed', v_event, now(), p_timeout, p_topic, p_regex, p_match);
    RETURN QUERY SELECT 'completed'::text, v_event;
    RETURN;
  END IF;
  INSERT INTO :SLUICE_SCHEMA.job_steps (job_id, seq, name, kind, state, wake_at, topic, regex, match)
  VALUES (p_job, p_seq, p_name, 'event', 'waiting', p_timeout, p_topic, p_regex, p_match);
  UPDATE :SLUICE_SCHEMA.jobs j SET waiting = coalesce(j.waiting, 0) + 1 WHERE j.id = p_job;
  RETURN QUERY SELECT 'waiting'::text, NULL::jsonb;
END
$fn$;

-- Resolves a wait that timed out (run by the job once due at its timeout): the step completes
-- with a null result, unless something resolved it first. Returns the step's state and result
-- after it; no row when the lease was lost.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.step_wait_timeout(p_job bigint, p_token uuid, p_seq integer)
RETURNS TABLE (state text, result jsonb)
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_n integer;
BEGIN
  -- The step's row first, then the job's, as publishes take them.
  UPDATE :SLUICE_SCHEMA.job_steps s SET state = 'completed', result = 'null', finished_at = now()
  WHERE s.job_id = p_job AND s.seq = p_seq AND s.state = 'waiting'
    AND EXISTS (SELECT 1 FROM :SLUICE_SCHEMA.jobs j WHERE j.id = p_job AND j.lease_token = p_token);
  GET DIAGNOSTICS v_n = ROW_COUNT;
  IF v_n > 0 THEN
    UPDATE :SLUICE_SCHEMA.jobs j SET waiting = greatest(coalesce(j.waiting, 0) - 1, 0) WHERE j.id = p_job;
  END IF;
  RETURN QUERY SELECT s.state, s.result FROM :SLUICE_SCHEMA.job_steps s
  WHERE s.job_id = p_job AND s.seq = p_seq
    AND EXISTS (SELECT 1 FROM :SLUICE_SCHEMA.jobs j WHERE j.id = p_job AND j.lease_token = p_token);
END
$fn$;

-- Makes the jobs whose waits were just resolved due when no wait of theirs is left open: the
-- jobs' rows in id order, then one update. p_resolved: (job id, waits resolved) pairs.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.steps_resolved(p_jobs bigint[], p_counts integer[])
RETURNS TABLE (queue text, jobs integer)
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM :SLUICE_SCHEMA.jobs j WHERE j.id = ANY (p_jobs) ORDER BY j.id FOR UPDATE;
  RETURN QUERY
  WITH r AS (
    SELECT x.id, sum(x.n)::integer AS n FROM unnest(p_jobs, p_counts) AS x(id, n) GROUP BY x.id
  ), woke AS (
    UPDATE :SLUICE_SCHEMA.jobs j
    SET waiting = greatest(coalesce(j.waiting, 0) - r.n, 0),
        run_at = CASE WHEN coalesce(j.waiting, 0) - r.n <= 0 AND j.lease_token IS NULL THEN now() ELSE j.run_at END
    FROM r WHERE j.id = r.id
    RETURNING j.queue, (coalesce(j.waiting, 0) = 0 AND j.lease_token IS NULL) AS due
  )
  SELECT woke.queue, count(*)::integer FROM woke WHERE woke.due GROUP BY woke.queue;
END
$fn$;

-- Jobs a parent invoked (ctx.invoke) that ended: each resolves its step in the parent (completed
-- with the child's result, or failed with its last error) and the parent is woken once its last
-- open wait resolves. p_children holds child_end's records (common.sql).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.steps_children_ended(p_children jsonb)
RETURNS void
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_jobs bigint[];
  v_counts integer[];
BEGIN
  WITH r AS (
    SELECT c.child_id, c.parent_id, c.ok, c.result, c.error
    FROM jsonb_to_recordset(p_children) AS c(child_id bigint, parent_id bigint, ok boolean, result jsonb, error jsonb)
  ), resolved AS (
    UPDATE :SLUICE_SCHEMA.job_steps s
    SET state = CASE WHEN r.ok THEN 'completed' ELSE 'failed' END, result = r.result, error = r.error,
        finished_at = now()
    FROM r
    WHERE s.job_id = r.parent_id AND s.child_id = r.child_id AND s.kind = 'invoke' AND s.state = 'waiting'
    RETURNING s.job_id
  )
  SELECT array_agg(job_id), array_agg(n) INTO v_jobs, v_counts
  FROM (SELECT job_id, count(*)::integer AS n FROM resolved GROUP BY job_id) g;
  IF v_jobs IS NOT NULL THEN
    PERFORM count(*) FROM :SLUICE_SCHEMA.steps_resolved(v_jobs, v_counts);
  END IF;
END
$fn$;

-- A publish's part in event waits (publish_events): its events go to the event log (where a
-- wait recorded later in a run that started before them finds them), and each open wait that
-- one of them matches (topic, and payload containing the wait's match) completes with it, once.
-- Returns, per queue, the jobs made due.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.wake_event_waits(p_events jsonb)
RETURNS TABLE (queue text, jobs integer)
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_jobs bigint[];
  v_counts integer[];
BEGIN
  WITH ev AS (
    SELECT x.event_id AS i, x.topic AS t, coalesce(x.payload, 'null') AS p, coalesce(x.headers, '{}') AS h,
           coalesce(x.published_at, now()) AS at
    FROM :SLUICE_SCHEMA.publish_event_records(p_events) x
  ), logged AS (
    INSERT INTO :SLUICE_SCHEMA.event_log (published_at, topic, event_id, payload, headers)
    SELECT at, t, i, p, h FROM ev
  ), resolved AS (
    UPDATE :SLUICE_SCHEMA.job_steps s
    SET state = 'completed', result = :SLUICE_SCHEMA.event_envelope(ev.t, ev.i, ev.p, ev.h, ev.at), finished_at = now()
    FROM ev
    WHERE s.kind = 'event' AND s.state = 'waiting'
      AND ((s.regex IS NULL AND s.topic = ev.t) OR (s.regex IS NOT NULL AND ('.' || ev.t) ~ s.regex))
      AND (s.match = '{}'::jsonb OR ev.p @> s.match)
    RETURNING s.job_id
  )
  SELECT array_agg(job_id), array_agg(n) INTO v_jobs, v_counts
  FROM (SELECT job_id, count(*)::integer AS n FROM resolved GROUP BY job_id) g;
  IF v_jobs IS NOT NULL THEN
    RETURN QUERY SELECT * FROM :SLUICE_SCHEMA.steps_resolved(v_jobs, v_counts);
  END IF;
END
$fn$;
