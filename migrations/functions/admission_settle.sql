-- Admission control fed by the settle (admission.sql has the gates): each ended attempt of a
-- policy's job, recorded, and the adaptive caps and "slow down" requests it drives.

-- Inside settle, each ended attempt of a policy's job: its partition, whether it succeeded, the
-- lag from its admission to its start, and a handler's "slow down" (ms), if it asked for one.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_outcome(
  p_policy text, p_partition text, p_succeeded boolean, p_lag_ms bigint, p_slow_down_ms bigint
)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE
AS $fn$
  SELECT CASE WHEN p_policy IS NOT NULL THEN jsonb_build_object(
    'policy', p_policy, 'partition_key', p_partition, 'succeeded', p_succeeded, 'lag_ms', p_lag_ms,
    'slow_down_ms', p_slow_down_ms) END
$fn$;

-- A JSON array of admission_outcome's records.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_outcomes(p_outcomes jsonb)
RETURNS TABLE (policy text, partition_key text, succeeded boolean, lag_ms bigint, slow_down_ms bigint, ord bigint)
LANGUAGE sql STABLE
AS $fn$
  SELECT o.policy, o.partition_key, o.succeeded, o.lag_ms, o.slow_down_ms, o.ord
  FROM ROWS FROM (jsonb_to_recordset(p_outcomes) AS (
    policy text, partition_key text, succeeded boolean, lag_ms bigint, slow_down_ms bigint
  )) WITH ORDINALITY AS o(policy, partition_key, succeeded, lag_ms, slow_down_ms, ord)
$fn$;

-- Adaptive concurrency, per partition with an adaptive cap, from one settle's outcomes: the EWMA
-- of the lag (weight 0.2 per run) moves first; then a failure or a "slow down" halves the cap
-- (once per settle), a lag over target multiplies it by 0.95, and otherwise each success whose
-- lag was within target adds 1. The cap stays within [min, max]. A "slow down" also stops
-- admission in the partition until its delay has passed.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_settled(p_outcomes jsonb)
RETURNS integer LANGUAGE sql
AS $fn$
  WITH o AS (
    SELECT r.policy, r.partition_key,
           count(*) FILTER (WHERE NOT r.succeeded AND r.slow_down_ms IS NULL)::integer AS failed,
           max(r.slow_down_ms) AS slow_down_ms,
           count(*) FILTER (WHERE r.lag_ms IS NOT NULL)::integer AS lags,
           avg(r.lag_ms) AS lag,
           array_agg(r.lag_ms ORDER BY r.ord) FILTER (WHERE r.succeeded) AS ok_lags
    FROM :SLUICE_SCHEMA.admission_outcomes(p_outcomes) r
    GROUP BY r.policy, r.partition_key
  ), e AS (
    SELECT o.*, p.adaptive_min, p.adaptive_max, p.target_lag_ms,
           CASE WHEN o.lags = 0 THEN p.ewma_lag_ms
                WHEN p.ewma_lag_ms IS NULL THEN o.lag
                ELSE p.ewma_lag_ms * 0.8 ^ o.lags + o.lag * (1 - 0.8 ^ o.lags) END AS ewma
    FROM o JOIN :SLUICE_SCHEMA.partitions p ON p.policy = o.policy AND p.partition_key = o.partition_key
    WHERE p.adaptive_min IS NOT NULL OR o.slow_down_ms IS NOT NULL
  ), changed AS (
    UPDATE :SLUICE_SCHEMA.partitions p
    SET ewma_lag_ms = e.ewma,
        adaptive_cap = CASE WHEN p.adaptive_min IS NULL THEN NULL ELSE greatest(p.adaptive_min::double precision, least(p.adaptive_max::double precision,
          CASE WHEN e.failed > 0 OR e.slow_down_ms IS NOT NULL THEN coalesce(p.adaptive_cap, p.adaptive_min) / 2
               WHEN e.ewma > p.target_lag_ms THEN coalesce(p.adaptive_cap, p.adaptive_min) * 0.95
               ELSE coalesce(p.adaptive_cap, p.adaptive_min)
                    + (SELECT count(*) FROM unnest(e.ok_lags) AS l(ms) WHERE l.ms IS NULL OR l.ms <= p.target_lag_ms) END)) END,
        slow_until = CASE WHEN e.slow_down_ms IS NULL THEN p.slow_until
                          ELSE greatest(coalesce(p.slow_until, now()), now() + e.slow_down_ms * interval '1 millisecond') END
    FROM e
    WHERE p.policy = e.policy AND p.partition_key = e.partition_key
    RETURNING 1
  )
  SELECT count(*)::integer FROM changed
$fn$;
