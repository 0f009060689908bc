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
-- settle_outcome's records. Returns whether there was anything to change: successes change a
-- breaker only where failures or trips are counted, and with none (every queue's state after
-- its last success) the update is not run, nor planned by a fresh backend; this small check is.
-- A failure settled at the same time is concurrent with these successes: either order is theirs.
-- It returned nothing before.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle_breakers(jsonb);
CREATE FUNCTION :SLUICE_SCHEMA.settle_breakers(p_outcomes jsonb)
RETURNS boolean
LANGUAGE plpgsql
SET jit = off
AS $fn$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM :SLUICE_SCHEMA.settle_outcomes(p_outcomes) r WHERE NOT r.succeeded)
     AND NOT EXISTS (SELECT 1 FROM :SLUICE_SCHEMA.queues q
                     WHERE q.breaker_threshold IS NOT NULL AND (q.consecutive_failures > 0 OR q.trips > 0)) THEN
    RETURN false;
  END IF;
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
  RETURN true;
END
$fn$;
