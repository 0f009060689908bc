-- Stage 4b of the claim for one admitting partition's jobs (admission_walk, admission_claim.sql),
-- as plain_walk.sql is stage 4 for a queue's plain jobs. A FROM item, placed where a file says
-- :ADMIT_WALK(alias), with :ROW standing for the admitting partition's row (its `policy`,
-- `partition_key`, `queue` and `take`): the partition's jobs in claim order, up to its take,
-- that meet stage 3 (the per-row condition), that no lease holds, and that no other claim has
-- locked. The admit index holds the partition's jobs leased or not (migration 0027): the walk
-- passes those in flight, and takes a job whose lease ran out (its drain died) at its place.
SELECT j.id, j.priority, j.run_at, j.exclusive_key, j.name
FROM :SLUICE_SCHEMA.jobs j
WHERE j.policy = :ROW.policy AND j.partition_key = :ROW.partition_key
  AND (j.lease_token IS NULL OR j.lease_until <= now())
  AND :CLAIM_CANDIDATE(j)
ORDER BY j.priority, j.run_at, j.id
LIMIT :ROW.take
FOR UPDATE SKIP LOCKED
