-- Deletes the lease rows (claim_leases, migration 0027) none of whose jobs still holds that lease.
-- A count of the jobs in flight (the view leased_jobs) is exact whether a row is deleted or not;
-- a row left behind only costs each count a look at its ids.
--   p_tokens given: a settle's, with p_ended the jobs whose lease it ended. When it names one
--     claim's token and ended as many jobs as that claim's rows hold, they all go without a look
--     at their jobs; otherwise each row of those tokens goes once none of its jobs is still its.
--   p_tokens null: maintenance, the rows of every lease whose end has passed, once they hold no
--     job.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.claim_leases_ended(p_tokens uuid[], p_ended integer)
RETURNS integer
LANGUAGE plpgsql
SET jit = off
AS $fn$
DECLARE
  n integer;
  v_tokens uuid[];
BEGIN
  IF p_tokens IS NULL THEN
    SELECT array_agg(DISTINCT l.token) INTO v_tokens
    FROM :SLUICE_SCHEMA.claim_leases l WHERE l.lease_until <= now();
  ELSE
    SELECT array_agg(DISTINCT t) INTO v_tokens FROM unnest(p_tokens) AS t WHERE t IS NOT NULL;
  END IF;
  IF v_tokens IS NULL THEN
    RETURN 0;
  END IF;
  IF cardinality(v_tokens) = 1 AND p_ended = (
       SELECT sum(cardinality(l.ids)) FROM :SLUICE_SCHEMA.claim_leases l WHERE l.token = v_tokens[1]) THEN
    DELETE FROM :SLUICE_SCHEMA.claim_leases l WHERE l.token = v_tokens[1];
  ELSE
    DELETE FROM :SLUICE_SCHEMA.claim_leases l
    WHERE l.token = ANY (v_tokens) AND NOT EXISTS (
      SELECT 1 FROM unnest(l.ids) AS x(id)
      JOIN :SLUICE_SCHEMA.jobs j ON j.id = x.id AND j.lease_token = l.token);
  END IF;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END
$fn$;
