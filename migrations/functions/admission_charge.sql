-- Stage 5b of the claim (claim_lease calls it): admitted jobs pay their partitions' tokens.

-- After the claim: each admitting partition pays a token per admitted job, and its last admission
-- is noted. Its row is still locked by admission_room, so nothing changed it since. None of the
-- columns it sets is indexed, so the update stays on the row's page (a HOT update).
-- plpgsql, so that its plan is cached: a LANGUAGE sql function that writes is planned on every call.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_charge(p_policies text[], p_parts text[])
RETURNS integer
LANGUAGE plpgsql
-- A few partitions by primary key, never a scan of all of them.
SET enable_seqscan = off
-- Generic plans always, for the same reason as claim_lease's: left to choose, a claim admitting
-- from a few partitions planned this afresh on every call.
SET plan_cache_mode = force_generic_plan
AS $fn$
#variable_conflict use_column
DECLARE
  v_n integer;
BEGIN
  WITH n AS (
    SELECT c.policy, c.partition_key, count(*)::integer AS n
    FROM unnest(p_policies, p_parts) AS c(policy, partition_key)
    WHERE c.policy IS NOT NULL
    GROUP BY c.policy, c.partition_key
  ), charged AS (
    UPDATE :SLUICE_SCHEMA.partitions p
    SET tokens = CASE WHEN p.rate IS NULL THEN NULL
                      ELSE :SLUICE_SCHEMA.admission_tokens(p.tokens, p.refilled_at, p.rate, p.per_ms, p.burst) - n.n END,
        refilled_at = CASE WHEN p.rate IS NULL THEN NULL ELSE greatest(coalesce(p.refilled_at, now()), now()) END,
        last_admitted_at = greatest(coalesce(p.last_admitted_at, now()), now())
    FROM n
    WHERE p.policy = n.policy AND p.partition_key = n.partition_key
    RETURNING 1
  )
  SELECT count(*)::integer INTO v_n FROM charged;
  RETURN v_n;
END
$fn$;
