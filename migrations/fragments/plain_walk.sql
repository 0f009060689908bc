-- Stage 4 of the claim for a queue's plain jobs (no admission policy), written once for both
-- walks that take them: claim_open's on the plain path and claim_pick's on a gated claim. A FROM
-- item, placed where a function file says :PLAIN_WALK(alias), with :ROW standing for the open
-- queue's row (its `name` and `room`): the queue's jobs on the ready index in claim order, up to
-- its room, that meet stage 3 (the per-row condition) and that no other claim has locked.
SELECT j.id, j.priority, j.run_at, j.exclusive_key, j.name
FROM :SLUICE_SCHEMA.jobs j
WHERE j.queue = :ROW.name AND j.policy IS NULL
  AND :CLAIM_CANDIDATE(j)
ORDER BY j.priority, j.run_at, j.id
LIMIT :ROW.room
FOR UPDATE SKIP LOCKED
