-- The single-consumer control's part of stage 1 (claim_open, in claim_stages.sql, calls it once for
-- each single-consumer queue whose lease the claim holds): puts back the queue's jobs whose lease
-- ran out (their drain died) at the place they had when claimed (`place_at`, kept by the claim),
-- ahead of the queue's later jobs: taken as they are, at their lease's end, they would come after
-- them. A job leased before migration 0022 kept no place: it goes back at its enqueue time, which
-- is no later than its place was (the queue's waiting jobs all came after it). Their attempt stays
-- counted (they may have run); one that had no attempt left is left to maintenance, which
-- dead-letters it. Returns how many. Its statement reads that queue's leased jobs on jobs_leased,
-- never every leased job.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.claim_restore_places(p_queue text)
RETURNS integer
LANGUAGE plpgsql
SET jit = off
AS $fn$
DECLARE
  n integer;
BEGIN
  UPDATE :SLUICE_SCHEMA.jobs j
  SET run_at = coalesce(j.place_at, j.enqueued_at), place_at = NULL, lease_token = NULL, leased_by = NULL
  WHERE j.queue = p_queue AND j.lease_token IS NOT NULL AND j.run_at <= now()
    -- One with no attempt left stays as it is, for maintenance to dead-letter (bury_exhausted).
    AND j.attempts < j.max_attempts;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END
$fn$;
