-- Event waits (ctx.waitForEvent, docs/steps.md): recording one, its timeout, and a publish's part
-- in them. A publish and a wait being recorded are ordered by an advisory lock (event_waits_lock).

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

-- Whether an event (its topic and payload) satisfies an event wait: the wait's topic, by equality
-- when the pattern has no wildcards (p_regex null) or by its regex; and a payload containing the
-- wait's match ('{}' takes any payload). A wait looking for an event and an event looking for
-- waits both ask this. A plain expression, inlined where it is used, so the open-wait indexes on
-- the topic still serve.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.event_wait_matches(
  p_topic text, p_regex text, p_match jsonb, p_event_topic text, p_event_payload jsonb
)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT ((p_regex IS NULL AND p_event_topic = p_topic) OR (p_regex IS NOT NULL AND ('.' || p_event_topic) ~ p_regex))
     AND (p_match = '{}'::jsonb OR p_event_payload @> p_match)
$fn$;

-- Records an event wait (ctx.waitForEvent). The event may already be here: one published since
-- the start of this run (the claim that took it; compared by the start of the publishing and the
-- claiming transactions, docs/steps.md) is looked for in the event log first, and taken
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
    AND :SLUICE_SCHEMA.event_wait_matches(p_topic, p_regex, p_match, e.topic, e.payload)
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
      AND :SLUICE_SCHEMA.event_wait_matches(s.topic, s.regex, s.match, ev.t, ev.p)
    RETURNING s.job_id
  )
  SELECT array_agg(job_id) INTO v_jobs FROM resolved;
  IF v_jobs IS NOT NULL THEN
    RETURN QUERY SELECT * FROM :SLUICE_SCHEMA.steps_resolved(v_jobs);
  END IF;
END
$fn$;
