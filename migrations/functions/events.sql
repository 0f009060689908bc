-- The events publish_events is sent (src/sql/publish.ts encodeEvents, and relay_outbox below): a
-- JSON array of objects keyed by the names of the outbox columns they come from. published_at
-- null means now(), headers null means {}, delay_ms null means 0 (applied by publish_events).
-- ord is each event's position in the array.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.publish_event_records(p_events jsonb)
RETURNS TABLE (
  event_id text, topic text, payload jsonb, headers jsonb, published_at timestamptz, delay_ms bigint, ord bigint
)
LANGUAGE sql STABLE
AS $fn$
  SELECT e.event_id, e.topic, e.payload, e.headers, e.published_at, e.delay_ms, e.ord
  FROM ROWS FROM (jsonb_to_recordset(p_events) AS (
    event_id text, topic text, payload jsonb, headers jsonb, published_at timestamptz, delay_ms bigint
  )) WITH ORDINALITY AS e(event_id, topic, payload, headers, published_at, delay_ms, ord)
$fn$;

-- Fans events out to the subscriptions whose pattern matches their topic (publish_events below
-- calls it): one delivery record
-- and one job per (event, subscriber) not delivered before. p_events is decoded by
-- publish_event_records. The job's payload is the event envelope
-- { topic, eventId, payload, headers, publishedAt }. A subscriber with an admission policy gets
-- its jobs under that policy, in the partition read from the event (a payload path or a header),
-- and the partition's row written as an enqueue writes it. A job's trace context is the event's
-- `traceparent` header (with its `tracestate`, if any) when it has a well-formed one, so that a
-- subscriber's run continues the trace that published the event. Returns the jobs written per queue.
-- A subscriber job's admission partition, from its subscription's admission record: the event
-- payload's field at `partition_path`, else the header `partition_header`, else ''. Null when the
-- subscription has no policy. Publish and replay both place jobs with it.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.event_partition(p_admission jsonb, p_payload jsonb, p_headers jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT CASE WHEN p_admission IS NOT NULL THEN coalesce(
    p_payload #>> string_to_array(p_admission->>'partition_path', '.'),
    p_headers ->> (p_admission->>'partition_header'), '') END
$fn$;

-- A subscriber job's W3C trace context, from its event's `traceparent` (and `tracestate`)
-- headers; null when there is no well-formed traceparent.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.event_trace_context(p_headers jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT CASE WHEN p_headers->>'traceparent' ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'
              THEN p_headers->>'traceparent' || coalesce(' ' || nullif(p_headers->>'tracestate', ''), '') END
$fn$;

CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.publish_fanout(p_events jsonb)
RETURNS TABLE (queue text, jobs integer)
LANGUAGE sql
SET jit = off
AS $fn$
  WITH ev AS (
    SELECT x.event_id AS i, x.topic AS t, x.payload AS p, coalesce(x.headers, '{}') AS h,
           coalesce(x.published_at, now()) AS at, coalesce(x.delay_ms, 0) AS d, x.ord AS o
    FROM :SLUICE_SCHEMA.publish_event_records(p_events) x
  ), matched AS (
    -- The first of several events with one id in the same call wins, as a second call would lose.
    SELECT DISTINCT ON (ev.i, s.name) ev.i, ev.t, ev.p, ev.h, ev.at, ev.d, s.name, s.queue, s.priority, s.max_attempts,
           nextval(pg_get_serial_sequence(':SLUICE_SCHEMA.jobs', 'id')) AS job_id, s.admission AS adm,
           :SLUICE_SCHEMA.event_partition(s.admission, ev.p, ev.h) AS part
    FROM ev
    JOIN :SLUICE_SCHEMA.subscriptions s ON ('.' || ev.t) ~ s.regex AND s.created_at <= ev.at
    ORDER BY ev.i, s.name, ev.o
  ), fresh AS (
    INSERT INTO :SLUICE_SCHEMA.event_deliveries (event_id, subscriber, job_id)
    SELECT i, name, job_id FROM matched
    ON CONFLICT DO NOTHING
    RETURNING job_id
  ), admitted AS (
    SELECT :SLUICE_SCHEMA.admission_enqueued(jsonb_agg(m.adm || jsonb_build_object(
             'queue', m.queue, 'policy', m.name, 'partition_key', m.part))) AS n
    FROM matched m JOIN fresh f ON f.job_id = m.job_id
    WHERE m.adm IS NOT NULL
    HAVING count(*) > 0
  ), written AS (
    INSERT INTO :SLUICE_SCHEMA.jobs (id, queue, name, payload, priority, max_attempts, run_at, policy, partition_key,
                                     trace_context)
    SELECT m.job_id, m.queue, m.name,
           jsonb_build_object('topic', m.t, 'eventId', m.i, 'payload', m.p, 'headers', m.h, 'publishedAt', m.at),
           m.priority, m.max_attempts, greatest(now(), m.at + m.d * interval '1 millisecond'),
           CASE WHEN m.adm IS NOT NULL THEN m.name END, m.part,
           :SLUICE_SCHEMA.event_trace_context(m.h)
    FROM matched m JOIN fresh f ON f.job_id = m.job_id
    RETURNING queue
  )
  SELECT w.queue, count(*)::integer FROM written w LEFT JOIN admitted ON true GROUP BY w.queue;
$fn$;

-- Publishes events: the fan-out to subscribers (publish_fanout) and the jobs waiting for them
-- (wake_event_waits, steps.sql). The event-wait lock is taken shared first, and each part then
-- runs with a snapshot taken after it: a wait recorded concurrently either is seen, or sees this
-- publish's events in the log (step_wait_event). Returns the subscriber jobs written per queue,
-- and a row with none for each queue where a waiting job was woken.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.publish_events(p_events jsonb)
RETURNS TABLE (queue text, jobs integer)
LANGUAGE plpgsql
SET jit = off
AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(:SLUICE_SCHEMA.event_waits_lock());
  RETURN QUERY
  SELECT x.queue, sum(x.jobs)::integer
  FROM (SELECT * FROM :SLUICE_SCHEMA.publish_fanout(p_events)
        UNION ALL
        -- Woken jobs name their queues (for their drains' wake-up) but are not jobs written.
        SELECT w.queue, 0 FROM :SLUICE_SCHEMA.wake_event_waits(p_events) w) x
  GROUP BY x.queue;
END
$fn$;

-- Writes an event to the outbox inside the caller's transaction: it is published (fanned out
-- to the subscribers) by the relay once the transaction commits, and never if it rolls back.
-- Callable from any SQL client. Returns the outbox entry's id.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.outbox_publish(
  p_topic text, p_payload jsonb, p_event_id text DEFAULT NULL, p_headers jsonb DEFAULT NULL, p_delay_ms bigint DEFAULT 0
)
RETURNS bigint LANGUAGE plpgsql
SET jit = off
AS $fn$
DECLARE
  v_id bigint;
BEGIN
  IF p_topic IS NULL OR length(p_topic) > 255 OR p_topic !~ '^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+){0,31}$' THEN
    RAISE EXCEPTION 'Invalid topic %: 1-32 words of letters, digits, "_" or "-", separated by dots, at most 255 characters',
      coalesce('"' || left(p_topic, 80) || '"', 'NULL') USING ERRCODE = '22023';
  END IF;
  IF p_event_id IS NOT NULL AND p_event_id !~ '^[!-~]{1,200}$' THEN
    RAISE EXCEPTION 'Invalid event id: 1-200 visible ASCII characters' USING ERRCODE = '22023';
  END IF;
  IF p_headers IS NOT NULL AND (jsonb_typeof(p_headers) <> 'object' OR EXISTS (
       SELECT 1 FROM jsonb_each(p_headers) h
       WHERE h.key !~ '^[A-Za-z0-9_.:-]{1,64}$' OR jsonb_typeof(h.value) <> 'string' OR length(h.value #>> '{}') > 1024)
     OR (SELECT count(*) FROM jsonb_object_keys(p_headers)) > 32) THEN
    RAISE EXCEPTION 'Invalid headers: an object of at most 32 string values, keys of 1-64 letters, digits, "_", ".", ":" or "-"'
      USING ERRCODE = '22023';
  END IF;
  IF p_delay_ms IS NOT NULL AND p_delay_ms < 0 THEN
    RAISE EXCEPTION 'Invalid delay: must be 0 or more milliseconds' USING ERRCODE = '22023';
  END IF;
  INSERT INTO :SLUICE_SCHEMA.outbox (topic, payload, event_id, headers, delay_ms)
  VALUES (p_topic, coalesce(p_payload, 'null'::jsonb), coalesce(p_event_id, gen_random_uuid()::text),
          coalesce(p_headers, '{}'), coalesce(p_delay_ms, 0))
  RETURNING id INTO v_id;
  RETURN v_id;
END
$fn$;

-- Publishes up to p_limit pending outbox entries, oldest first, exactly once each: the entries
-- are taken FOR UPDATE SKIP LOCKED (concurrent relays take disjoint sets, and an entry a relay
-- committed is no longer pending when another one gets to lock it), stamped published_at and
-- fanned out by publish_events in the same transaction. An entry's event counts as published
-- when it was written, so subscribers added since then do not receive it.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.relay_outbox(p_limit integer)
RETURNS TABLE (entries integer, jobs integer)
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_n integer;
  v_events jsonb;
BEGIN
  WITH picked AS (
    SELECT o.id FROM :SLUICE_SCHEMA.outbox o
    WHERE o.published_at IS NULL
    ORDER BY o.id
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED
  ), stamped AS (
    UPDATE :SLUICE_SCHEMA.outbox o SET published_at = now()
    FROM picked WHERE o.id = picked.id
    RETURNING o.id, o.topic, o.payload, o.event_id, o.headers, o.created_at, o.delay_ms
  )
  SELECT count(*)::integer,
         coalesce(jsonb_agg(jsonb_build_object('event_id', event_id, 'topic', topic, 'payload', payload,
                                               'headers', headers, 'published_at', created_at,
                                               'delay_ms', delay_ms) ORDER BY id), '[]')
  INTO v_n, v_events
  FROM stamped;
  IF v_n = 0 THEN
    RETURN QUERY SELECT 0, 0;
    RETURN;
  END IF;
  RETURN QUERY SELECT v_n, coalesce(sum(p.jobs), 0)::integer FROM :SLUICE_SCHEMA.publish_events(v_events) p;
END
$fn$;
