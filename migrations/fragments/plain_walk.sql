-- Stage 4 of the claim for a queue's plain jobs (no admission policy), written once for both
-- walks that take them: claim_open's on the plain path and claim_pick's on a gated one. A FROM
-- item, placed where a function file says :PLAIN_WALK(alias), with :ROW standing for the open
-- queue's row (its `name` and `room`): the queue's jobs in claim order, up to its room, that meet
-- stage 3 (the per-row condition), that no lease holds, and that no other claim has locked. The
-- ready index holds the queue's jobs leased or not (a claim writes nothing it indexes, migration
-- 0027): the walk passes the jobs in flight at the head of its range, and takes a job whose lease
-- ran out (its drain died) at its place.
SELECT j.id, j.priority, j.run_at, j.exclusive_key, j.name
FROM :SLUICE_SCHEMA.jobs j
WHERE j.queue = :ROW.name AND j.policy IS NULL
  AND (j.lease_token IS NULL OR j.lease_until <= now())
  AND :CLAIM_CANDIDATE(j)
ORDER BY j.priority, j.run_at, j.id
LIMIT :ROW.room
FOR UPDATE SKIP LOCKED
