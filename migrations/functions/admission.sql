-- Admission control: the gates of a job's `admission` policy, decided inside the claim
-- (admission_claim.sql, admission_ring.sql and admission_charge.sql: stages 2b, 4b and 5b of
-- claim.sql) and fed by the settle (admission_settle.sql). A policy's jobs carry `policy` and
-- `partition_key`; each partition has a row in `partitions` with its gates' state. Nothing lives
-- in a process. This file holds each gate's reading of a partition's row, which the claim, the
-- settle and the views share: applied first, as LANGUAGE sql functions elsewhere need them when
-- they are created.

-- Throttle: the partition's tokens now, refilled with the time since `refilled_at` and capped at
-- `burst`. Time never runs backwards here: a claim whose transaction started before the last
-- refill sees no refill at all.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_tokens(
  p_tokens double precision, p_refilled_at timestamptz, p_rate double precision, p_per_ms bigint,
  p_burst double precision
)
RETURNS double precision LANGUAGE sql STABLE
AS $fn$
  SELECT least(p_burst, coalesce(p_tokens, p_burst)
    + greatest(0, extract(epoch FROM now() - coalesce(p_refilled_at, now())) * 1000) * p_rate / p_per_ms)
$fn$;

-- Concurrency and adaptive concurrency: the partition's cap on admitted-and-unfinished jobs, or
-- null for none. An operator's override wins over both.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_cap(
  p_override integer, p_max_in_flight integer, p_adaptive_cap double precision
)
RETURNS integer LANGUAGE sql IMMUTABLE
AS $fn$
  SELECT coalesce(p_override, least(p_max_in_flight, floor(p_adaptive_cap)::integer))
$fn$;

-- A partition's admitted and unfinished jobs (a lease past its end no longer counts: a dead
-- drain's slots come back with its leases), counted on the partition's lease rows in the order of
-- the one index that gives it (claim_leases_partition), with sorts and table scans off: while
-- statistics say the table is empty (as VACUUM leaves it between drains), the planner would
-- otherwise read every lease row for each partition it counts.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_in_flight(p_policy text, p_partition text)
RETURNS integer LANGUAGE sql STABLE
SET enable_sort = off
SET enable_seqscan = off
AS $fn$
  SELECT count(*)::integer FROM (
    SELECT FROM :SLUICE_SCHEMA.leased_jobs a
    WHERE a.policy = p_policy AND a.partition_key = p_partition AND a.lease_until > now()
    ORDER BY a.policy, a.partition_key, a.lease_until
  ) running
$fn$;
