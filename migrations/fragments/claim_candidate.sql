-- Stage 3 of the claim, the per-row condition a waiting job must meet to be picked, written once
-- for every walk that picks jobs: a queue's plain jobs (plain_walk.sql, in claim_open and
-- claim_pick) and an admitting partition's (admission_walk, admission_claim.sql). Placed where a
-- file says :CLAIM_CANDIDATE(alias), with :ROW standing for the jobs row's alias
-- (scripts/gen-migrations.ts).
--
-- Due, with attempts left, and not waiting behind a while-executing key that another job holds.
-- A new per-job control adds its condition here, and every walk follows. Inline SQL, not a
-- function: a function with a subquery is not inlined, and would run as a statement of its own
-- for every row a walk reads; nor a view: a view locked FOR UPDATE is not flattened, and the walk
-- would lock every due job before its LIMIT.
:ROW.run_at <= now() AND :ROW.attempts < :ROW.max_attempts
AND (:ROW.exclusive_key IS NULL OR NOT EXISTS (
      SELECT 1 FROM :SLUICE_SCHEMA.unique_locks u
      WHERE u.key = :ROW.exclusive_key AND u.job_id <> :ROW.id AND u.expires_at >= now()))
