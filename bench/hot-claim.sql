-- What a HOT claim would save, on a model of the jobs table (psql script):
--
--   psql "$DATABASE_URL" -v n=100000 -v fillfactor=35 [-v inflight=800] -f bench/hot-claim.sql
--
-- Four tables with the jobs table's columns and N no-op jobs each, drained by the same loop in
-- one backend: claim 200 (walk the ready index, lock, lease), commit, then delete the batch claimed
-- before it, commit (a drain's pipeline: a batch settles after the next one is claimed). No
-- archive, no stats: only what the claim's storage decides.
--   today: the claim sets run_at (the lease's end), attempts and lease_token, which are keys or
--          predicates of the ready, leased, retrying and last-attempt indexes, so every claimed row
--          gets a new heap tuple and new index entries (no HOT update);
--   hot:   the lease's end in its own column (lease_until), and no index on any column the claim
--          sets; the walk skips rows under a live lease. The table's fillfactor leaves room for
--          the new versions on their page.
--   lease table: the job's row is not touched by the claim; a lease is a row of its own (job,
--          token, end, queue), indexed by job and by queue for the counts that read leases; the
--          walk skips jobs with a live lease, and the settle deletes both rows.
--   hot + batch leases: the hot table's claim, and one row per claimed batch (its queue, its
--          lease's end, its ids) that the settle deletes: what would count the jobs in flight
--          exactly without an index on the lease (caps, admission, metrics). Each claim reads its
--          queue's running count from those rows, as a global cap would.
-- With inflight=K, the first K jobs of each table are leased for an hour before the clock starts
-- and stay so (other drains' batches in flight): today's claim moved them out of the ready range,
-- the hot table's walk passes them at the head of its index on every claim, the lease table's
-- walk probes their leases. The figures are then per job drained (N − K).
-- Prints WAL bytes and backend time per job for each, and how many updates were HOT. Drops its
-- schema at the end. A model, not Sluice's SQL: for the hot table, counting leased jobs (caps,
-- admission, metrics) without the leased indexes is the part of the redesign it leaves out.
\set ON_ERROR_STOP on
\if :{?n}
\else
  \set n 100000
\endif
\if :{?fillfactor}
\else
  \set fillfactor 35
\endif
\if :{?inflight}
\else
  \set inflight 0
\endif
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS sluice_hot_model CASCADE;
CREATE SCHEMA sluice_hot_model;
SET search_path = sluice_hot_model;

CREATE TABLE today (
  id bigserial PRIMARY KEY, queue text NOT NULL, name text NOT NULL, payload jsonb NOT NULL,
  priority smallint NOT NULL DEFAULT 16384, run_at timestamptz NOT NULL DEFAULT now(),
  attempts integer NOT NULL DEFAULT 0, max_attempts integer NOT NULL DEFAULT 5, lease_token uuid, leased_by text,
  enqueued_at timestamptz NOT NULL DEFAULT now(), errors jsonb NOT NULL DEFAULT '[]', concurrency_key text,
  unique_key text, exclusive_key text, batch_id bigint, policy text, partition_key text, trace_context text,
  started_at timestamptz, waiting integer, parent_id bigint
) WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
CREATE TABLE hot (LIKE today INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  WITH (fillfactor = :fillfactor, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE hot ADD PRIMARY KEY (id);
ALTER TABLE hot ADD COLUMN lease_until timestamptz;
CREATE TABLE apart (LIKE today INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE apart ADD PRIMARY KEY (id);
CREATE TABLE hot2 (LIKE today INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  WITH (fillfactor = :fillfactor, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE hot2 ADD PRIMARY KEY (id);
ALTER TABLE hot2 ADD COLUMN lease_until timestamptz;
CREATE TABLE batch_leases (
  seq bigserial PRIMARY KEY, queue text NOT NULL, until timestamptz NOT NULL, ids bigint[] NOT NULL
);
CREATE INDEX batch_leases_queue ON batch_leases (queue, until);
CREATE TABLE leases (
  job_id bigint PRIMARY KEY, queue text NOT NULL, token uuid NOT NULL, leased_by text NOT NULL,
  until timestamptz NOT NULL, attempt integer NOT NULL, started_at timestamptz NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
CREATE INDEX leases_queue ON leases (queue, until);

-- Today's indexes on jobs.
CREATE INDEX today_ready ON today (queue, priority, run_at, id) WHERE policy IS NULL;
CREATE INDEX today_leased ON today (queue) WHERE lease_token IS NOT NULL;
CREATE INDEX today_retrying ON today (queue, run_at) WHERE attempts > 0 AND lease_token IS NULL;
CREATE INDEX today_last_attempt ON today (run_at) WHERE lease_token IS NOT NULL AND attempts >= max_attempts;
CREATE INDEX today_concurrency_key ON today (concurrency_key) WHERE concurrency_key IS NOT NULL;
CREATE INDEX today_unique_key ON today (unique_key) WHERE unique_key IS NOT NULL;
CREATE INDEX today_admit ON today (policy, partition_key, priority, run_at, id) WHERE policy IS NOT NULL;
-- The same without the lease's indexes: nothing the claim sets is indexed.
CREATE INDEX hot_ready ON hot (queue, priority, run_at, id) WHERE policy IS NULL;
CREATE INDEX hot_concurrency_key ON hot (concurrency_key) WHERE concurrency_key IS NOT NULL;
CREATE INDEX hot_unique_key ON hot (unique_key) WHERE unique_key IS NOT NULL;
CREATE INDEX hot_admit ON hot (policy, partition_key, priority, run_at, id) WHERE policy IS NOT NULL;
CREATE INDEX hot2_ready ON hot2 (queue, priority, run_at, id) WHERE policy IS NULL;
CREATE INDEX hot2_concurrency_key ON hot2 (concurrency_key) WHERE concurrency_key IS NOT NULL;
CREATE INDEX hot2_unique_key ON hot2 (unique_key) WHERE unique_key IS NOT NULL;
CREATE INDEX hot2_admit ON hot2 (policy, partition_key, priority, run_at, id) WHERE policy IS NOT NULL;
CREATE INDEX apart_ready ON apart (queue, priority, run_at, id) WHERE policy IS NULL;
CREATE INDEX apart_concurrency_key ON apart (concurrency_key) WHERE concurrency_key IS NOT NULL;
CREATE INDEX apart_unique_key ON apart (unique_key) WHERE unique_key IS NOT NULL;
CREATE INDEX apart_admit ON apart (policy, partition_key, priority, run_at, id) WHERE policy IS NOT NULL;

INSERT INTO today (queue, name, payload) SELECT 'q', 'noop', jsonb_build_object('n', g) FROM generate_series(1, :n) g;
INSERT INTO hot (queue, name, payload) SELECT 'q', 'noop', jsonb_build_object('n', g) FROM generate_series(1, :n) g;
INSERT INTO apart (queue, name, payload) SELECT 'q', 'noop', jsonb_build_object('n', g) FROM generate_series(1, :n) g;
INSERT INTO hot2 (queue, name, payload) SELECT 'q', 'noop', jsonb_build_object('n', g) FROM generate_series(1, :n) g;
-- Jobs in flight in other drains, for the whole run.
UPDATE today SET run_at = now() + interval '1 hour', attempts = 1, lease_token = gen_random_uuid(),
                 leased_by = 'drn_other', started_at = now()
WHERE id IN (SELECT id FROM today ORDER BY id LIMIT :inflight);
UPDATE hot SET lease_until = now() + interval '1 hour', attempts = 1, lease_token = gen_random_uuid(),
               leased_by = 'drn_other', started_at = now()
WHERE id IN (SELECT id FROM hot ORDER BY id LIMIT :inflight);
INSERT INTO leases (job_id, queue, token, leased_by, until, attempt, started_at)
SELECT id, queue, gen_random_uuid(), 'drn_other', now() + interval '1 hour', 1, now()
FROM apart ORDER BY id LIMIT :inflight;
UPDATE hot2 SET lease_until = now() + interval '1 hour', attempts = 1, lease_token = gen_random_uuid(),
                leased_by = 'drn_other', started_at = now()
WHERE id IN (SELECT id FROM hot2 ORDER BY id LIMIT :inflight);
INSERT INTO batch_leases (queue, until, ids)
SELECT 'q', now() + interval '1 hour', array_agg(id) FROM (SELECT id FROM hot2 ORDER BY id LIMIT :inflight) x
HAVING count(*) > 0;
SELECT :n - :inflight AS drained \gset
VACUUM ANALYZE today;
VACUUM ANALYZE hot;
VACUUM ANALYZE apart;
VACUUM ANALYZE leases;
VACUUM ANALYZE hot2;
VACUUM ANALYZE batch_leases;
CHECKPOINT;
-- HOT updates before the clock (the in-flight leases), left out of the counts below.
SELECT pg_stat_force_next_flush();
SELECT (SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'today'::regclass) AS today_hot0,
       (SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'hot'::regclass) AS hot_hot0,
       (SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'hot2'::regclass) AS hot2_hot0 \gset

SELECT pg_current_wal_insert_lsn() AS l0, clock_timestamp() AS t0 \gset
DO $$
DECLARE
  v_prev bigint[];
  v_cur bigint[];
BEGIN
  LOOP
    WITH picked AS (
      SELECT id FROM today WHERE queue = 'q' AND policy IS NULL AND run_at <= now() AND attempts < max_attempts
      ORDER BY priority, run_at, id LIMIT 200 FOR UPDATE SKIP LOCKED
    ), leased AS (
      UPDATE today t SET run_at = now() + interval '60 s', attempts = t.attempts + 1, lease_token = gen_random_uuid(),
                         leased_by = 'drn_0123456789abcdef0123456789abcdef', started_at = now()
      FROM picked WHERE t.id = picked.id RETURNING t.id
    )
    SELECT array_agg(id) INTO v_cur FROM leased;
    COMMIT;
    IF v_prev IS NOT NULL THEN
      DELETE FROM today WHERE id = ANY (v_prev);
      COMMIT;
    END IF;
    EXIT WHEN v_cur IS NULL;
    v_prev := v_cur;
  END LOOP;
END
$$;
SELECT pg_current_wal_insert_lsn() AS l1, clock_timestamp() AS t1 \gset
DO $$
DECLARE
  v_prev bigint[];
  v_cur bigint[];
BEGIN
  LOOP
    WITH picked AS (
      SELECT id FROM hot WHERE queue = 'q' AND policy IS NULL AND run_at <= now() AND attempts < max_attempts
        AND (lease_until IS NULL OR lease_until <= now())
      ORDER BY priority, run_at, id LIMIT 200 FOR UPDATE SKIP LOCKED
    ), leased AS (
      UPDATE hot h SET lease_until = now() + interval '60 s', attempts = h.attempts + 1, lease_token = gen_random_uuid(),
                       leased_by = 'drn_0123456789abcdef0123456789abcdef', started_at = now()
      FROM picked WHERE h.id = picked.id RETURNING h.id
    )
    SELECT array_agg(id) INTO v_cur FROM leased;
    COMMIT;
    IF v_prev IS NOT NULL THEN
      DELETE FROM hot WHERE id = ANY (v_prev);
      COMMIT;
    END IF;
    EXIT WHEN v_cur IS NULL;
    v_prev := v_cur;
  END LOOP;
END
$$;
SELECT pg_current_wal_insert_lsn() AS l2, clock_timestamp() AS t2 \gset
-- The lease table holds only the leases in flight: analyzed empty, it would be read whole for
-- every job the walk looks at. Its primary key, then, as a real schema would plan it.
SET enable_seqscan = off;
DO $$
DECLARE
  v_prev bigint[];
  v_cur bigint[];
BEGIN
  LOOP
    WITH picked AS (
      SELECT a.id, a.queue, a.attempts FROM apart a
      WHERE a.queue = 'q' AND a.policy IS NULL AND a.run_at <= now() AND a.attempts < a.max_attempts
        AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.job_id = a.id AND l.until > now())
      ORDER BY a.priority, a.run_at, a.id LIMIT 200 FOR UPDATE SKIP LOCKED
    ), leased AS (
      INSERT INTO leases (job_id, queue, token, leased_by, until, attempt, started_at)
      SELECT id, queue, gen_random_uuid(), 'drn_0123456789abcdef0123456789abcdef', now() + interval '60 s',
             attempts + 1, now()
      FROM picked
      ON CONFLICT (job_id) DO UPDATE SET token = excluded.token, leased_by = excluded.leased_by,
        until = excluded.until, attempt = excluded.attempt, started_at = excluded.started_at
      RETURNING job_id
    )
    SELECT array_agg(job_id) INTO v_cur FROM leased;
    COMMIT;
    IF v_prev IS NOT NULL THEN
      WITH gone AS (DELETE FROM apart WHERE id = ANY (v_prev) RETURNING id)
      DELETE FROM leases l USING gone WHERE l.job_id = gone.id;
      COMMIT;
    END IF;
    EXIT WHEN v_cur IS NULL;
    v_prev := v_cur;
  END LOOP;
END
$$;
SELECT pg_current_wal_insert_lsn() AS l3, clock_timestamp() AS t3 \gset
RESET enable_seqscan;
DO $$
DECLARE
  v_prev bigint[];
  v_prev_seq bigint;
  v_cur bigint[];
  v_seq bigint;
  v_running bigint;
BEGIN
  LOOP
    WITH running AS (
      SELECT coalesce(sum(cardinality(ids)), 0) AS n FROM batch_leases WHERE queue = 'q' AND until > now()
    ), picked AS (
      SELECT id FROM hot2 WHERE queue = 'q' AND policy IS NULL AND run_at <= now() AND attempts < max_attempts
        AND (lease_until IS NULL OR lease_until <= now())
      ORDER BY priority, run_at, id LIMIT 200 FOR UPDATE SKIP LOCKED
    ), leased AS (
      UPDATE hot2 h SET lease_until = now() + interval '60 s', attempts = h.attempts + 1, lease_token = gen_random_uuid(),
                        leased_by = 'drn_0123456789abcdef0123456789abcdef', started_at = now()
      FROM picked WHERE h.id = picked.id RETURNING h.id
    ), lease AS (
      INSERT INTO batch_leases (queue, until, ids)
      SELECT 'q', now() + interval '60 s', array_agg(id) FROM leased HAVING count(*) > 0
      RETURNING seq, ids
    )
    SELECT l.ids, l.seq, (SELECT n FROM running) INTO v_cur, v_seq, v_running FROM (SELECT 1) one LEFT JOIN lease l ON true;
    COMMIT;
    IF v_prev IS NOT NULL THEN
      DELETE FROM hot2 WHERE id = ANY (v_prev);
      DELETE FROM batch_leases WHERE seq = v_prev_seq;
      COMMIT;
    END IF;
    EXIT WHEN v_cur IS NULL;
    v_prev := v_cur;
    v_prev_seq := v_seq;
  END LOOP;
END
$$;
SELECT pg_current_wal_insert_lsn() AS l4, clock_timestamp() AS t4 \gset
SELECT pg_stat_force_next_flush();

SELECT 'today' AS claim,
       round(pg_wal_lsn_diff(:'l1', :'l0') / :drained) AS wal_bytes_per_job,
       round((extract(epoch FROM :'t1'::timestamptz - :'t0'::timestamptz) * 1e6 / :drained)::numeric, 1) AS us_per_job,
       (SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'today'::regclass) - :today_hot0 AS hot_updates
UNION ALL
SELECT 'hot, fillfactor ' || :fillfactor,
       round(pg_wal_lsn_diff(:'l2', :'l1') / :drained),
       round((extract(epoch FROM :'t2'::timestamptz - :'t1'::timestamptz) * 1e6 / :drained)::numeric, 1),
       (SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'hot'::regclass) - :hot_hot0
UNION ALL
SELECT 'lease table',
       round(pg_wal_lsn_diff(:'l3', :'l2') / :drained),
       round((extract(epoch FROM :'t3'::timestamptz - :'t2'::timestamptz) * 1e6 / :drained)::numeric, 1),
       NULL
UNION ALL
SELECT 'hot + batch leases, fillfactor ' || :fillfactor,
       round(pg_wal_lsn_diff(:'l4', :'l3') / :drained),
       round((extract(epoch FROM :'t4'::timestamptz - :'t3'::timestamptz) * 1e6 / :drained)::numeric, 1),
       (SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'hot2'::regclass) - :hot2_hot0;

DROP SCHEMA sluice_hot_model CASCADE;
