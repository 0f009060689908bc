-- Jobs of a queue that a drain could run now, counted up to p_cap: plain jobs due (waiting, or
-- their lease ran out), and policy jobs due in partitions that are not paused, slowed down, out of
-- tokens, at their cap or in a policy at its global cap (a cap frees up as the jobs running
-- settle, and the drain running them claims again then). Each walk is ordered as its index is
-- (ready or admit, which hold leased jobs too, passed here), so that it is walked on it:
-- unordered, a limited scan of the whole table can look cheaper, and reads every job when a
-- partition has fewer than p_cap.
--
-- plpgsql, not SQL: a statement is planned only when it runs, and then kept. A drain's last settle
-- counts its queues here; on queues without admission partitions the partitions' count, with its
-- gates, is never planned (a fresh backend's first settle planned it: about 3 ms).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.queue_ready(p_queues text[], p_cap integer)
RETURNS integer LANGUAGE plpgsql STABLE
SET jit = off
AS $fn$
DECLARE
  v_plain integer;
  v_admitted integer := 0;
BEGIN
  SELECT count(*)::integer INTO v_plain FROM (
    SELECT 1 FROM unnest(p_queues) AS q(name)
    CROSS JOIN LATERAL (
      SELECT 1 FROM :SLUICE_SCHEMA.jobs j
      WHERE j.queue = q.name AND j.policy IS NULL AND (j.lease_token IS NULL OR j.lease_until <= now())
        AND j.run_at <= now() AND j.attempts < j.max_attempts
      ORDER BY j.priority, j.run_at, j.id
      LIMIT p_cap) x
    LIMIT p_cap) r;
  IF v_plain < p_cap AND EXISTS (SELECT 1 FROM :SLUICE_SCHEMA.partitions p WHERE p.queue = ANY (p_queues)) THEN
    SELECT count(*)::integer INTO v_admitted FROM (
      SELECT 1 FROM :SLUICE_SCHEMA.partitions p
      CROSS JOIN LATERAL (
        SELECT 1 FROM :SLUICE_SCHEMA.jobs j
        WHERE j.policy = p.policy AND j.partition_key = p.partition_key
          AND (j.lease_token IS NULL OR j.lease_until <= now())
          AND j.run_at <= now() AND j.attempts < j.max_attempts
        ORDER BY j.priority, j.run_at, j.id
        LIMIT p_cap) x
      WHERE p.queue = ANY (p_queues) AND NOT p.paused AND coalesce(p.slow_until, '-infinity') <= now()
        AND (p.rate IS NULL OR :SLUICE_SCHEMA.admission_tokens(p.tokens, p.refilled_at, p.rate, p.per_ms, p.burst) >= 1)
        AND (:SLUICE_SCHEMA.admission_cap(p.cap_override, p.max_in_flight, p.adaptive_cap) IS NULL
             OR :SLUICE_SCHEMA.admission_cap(p.cap_override, p.max_in_flight, p.adaptive_cap)
                > :SLUICE_SCHEMA.admission_in_flight(p.policy, p.partition_key))
        -- Nor a policy at its global cap.
        AND NOT EXISTS (
          SELECT 1 FROM :SLUICE_SCHEMA.policies g
          WHERE g.name = p.policy AND g.global_max IS NOT NULL AND g.global_max <= (
            SELECT count(*) FROM :SLUICE_SCHEMA.leased_jobs a
            WHERE a.policy = g.name AND a.lease_until > now()))
      LIMIT p_cap - v_plain) r;
  END IF;
  RETURN v_plain + v_admitted;
END
$fn$;
