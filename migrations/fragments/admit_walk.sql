-- Stage 4b of the claim for one admitting partition's jobs (admission_walk, admission_claim.sql),
-- as plain_walk.sql is stage 4 for a queue's plain jobs. A FROM item, placed where a file says
-- :ADMIT_WALK(alias), with :ROW standing for the admitting partition's row (its `policy`,
-- `partition_key`, `queue` and `take`): the partition's jobs in claim order, up to its take,
-- that meet stage 3 (the per-row condition) and that no other claim has locked. Waiting jobs are
-- walked on the admit index, which holds no leased job; jobs whose lease ran out (their drain
-- died), due from the lease's end, on jobs_admitted's range of ended leases, which is empty but
-- for them.
SELECT w.id, w.priority, w.run_at, w.exclusive_key, w.name
FROM (
  SELECT * FROM (
    SELECT j.id, j.priority, j.run_at, j.exclusive_key, j.name
    FROM :SLUICE_SCHEMA.jobs j
    WHERE j.policy = :ROW.policy AND j.partition_key = :ROW.partition_key AND j.lease_token IS NULL
      AND :CLAIM_CANDIDATE(j)
    ORDER BY j.priority, j.run_at, j.id
    LIMIT :ROW.take
    FOR UPDATE SKIP LOCKED) waiting
  UNION ALL
  SELECT * FROM (
    SELECT j.id, j.priority, j.run_at, j.exclusive_key, j.name
    FROM :SLUICE_SCHEMA.jobs j
    WHERE j.policy = :ROW.policy AND j.partition_key = :ROW.partition_key AND j.lease_token IS NOT NULL
      -- The queue too: either index this arm may be read on (jobs_admitted, jobs_leased) then
      -- bounds it to the ended leases, never every leased job.
      AND j.queue = :ROW.queue
      AND :CLAIM_CANDIDATE(j)
    ORDER BY j.priority, j.run_at, j.id
    LIMIT :ROW.take
    FOR UPDATE SKIP LOCKED) lapsed
) w
ORDER BY w.priority, w.run_at, w.id
LIMIT :ROW.take
