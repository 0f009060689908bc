-- Stage 4 of the claim for a queue's plain jobs (no admission policy), written once for both
-- walks that take them: claim_open's on the plain path and claim_pick's on a gated one. A FROM
-- item, placed where a function file says :PLAIN_WALK(alias), with :ROW standing for the open
-- queue's row (its `name` and `room`): the queue's jobs in claim order, up to its room, that meet
-- stage 3 (the per-row condition) and that no other claim has locked. Waiting jobs are walked on
-- the ready index, which holds no leased job; jobs whose lease ran out (their drain died), due
-- from the lease's end, on jobs_leased's range of ended leases, which is empty but for them.
SELECT w.id, w.priority, w.run_at, w.exclusive_key, w.name
FROM (
  SELECT * FROM (
    SELECT j.id, j.priority, j.run_at, j.exclusive_key, j.name
    FROM :SLUICE_SCHEMA.jobs j
    WHERE j.queue = :ROW.name AND j.policy IS NULL AND j.lease_token IS NULL
      AND :CLAIM_CANDIDATE(j)
    ORDER BY j.priority, j.run_at, j.id
    LIMIT :ROW.room
    FOR UPDATE SKIP LOCKED) waiting
  UNION ALL
  SELECT * FROM (
    SELECT j.id, j.priority, j.run_at, j.exclusive_key, j.name
    FROM :SLUICE_SCHEMA.jobs j
    WHERE j.queue = :ROW.name AND j.policy IS NULL AND j.lease_token IS NOT NULL
      AND :CLAIM_CANDIDATE(j)
    ORDER BY j.priority, j.run_at, j.id
    LIMIT :ROW.room
    FOR UPDATE SKIP LOCKED) lapsed
) w
ORDER BY w.priority, w.run_at, w.id
LIMIT :ROW.room
