-- The circuit breaker's part of a settle (settle.sql calls settle_breakers after the stages in
-- settle_stages.sql): what a failed attempt counts as, and each queue's breaker from the
-- attempts' outcomes.

-- What a failed attempt counts as for its queue's breaker: a failure (false), or nothing (null)
-- when the drain's deadline stopped the run (DRAIN_DEADLINE): the platform's time is not the
-- handlers' failure, and counting it would pause the queue's quick jobs with it. The attempt
-- itself still counts.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.breaker_verdict(p_error jsonb)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT CASE WHEN p_error->>'code' = 'DRAIN_DEADLINE' THEN NULL ELSE false END
$fn$;

-- Circuit breakers: a success closes the breaker and resets its trips; failures count up, and
-- at the threshold the queue pauses for base × 2^trips (capped). Only queues with a breaker and
-- something to change are touched, so healthy queues take no row lock here. p_outcomes holds
-- settle_outcome's records.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_breakers(p_outcomes jsonb)
RETURNS void
LANGUAGE plpgsql
SET jit = off
AS $fn$
BEGIN
  WITH o AS (
    SELECT r.queue, bool_or(r.succeeded) AS any_ok, count(*) FILTER (WHERE NOT r.succeeded)::integer AS failures
    FROM :SLUICE_SCHEMA.settle_outcomes(p_outcomes) r
    -- An outcome with no verdict (see breaker_verdict) counts neither way.
    WHERE r.succeeded IS NOT NULL
    GROUP BY r.queue
  )
  UPDATE :SLUICE_SCHEMA.queues c
  SET consecutive_failures = CASE
        WHEN o.any_ok THEN 0
        WHEN c.consecutive_failures + o.failures >= c.breaker_threshold THEN 0
        ELSE c.consecutive_failures + o.failures END,
      trips = CASE
        WHEN o.any_ok THEN 0
        WHEN c.consecutive_failures + o.failures >= c.breaker_threshold THEN c.trips + 1
        ELSE c.trips END,
      breaker_until = CASE
        WHEN NOT o.any_ok AND c.consecutive_failures + o.failures >= c.breaker_threshold
        THEN now() + least(c.breaker_cap_ms, c.breaker_base_ms * (2 ^ least(c.trips, 40))::bigint) * interval '1 millisecond'
        ELSE c.breaker_until END
  FROM o
  WHERE c.name = o.queue AND c.breaker_threshold IS NOT NULL
    AND (o.failures > 0 OR c.consecutive_failures > 0 OR c.trips > 0);
END
$fn$;
