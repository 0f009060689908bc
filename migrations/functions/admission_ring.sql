-- Admission's turn order (docs/admission.md): each queue's partitions sit on a ring
-- (partitions.ring, a hash of policy and key, ties in (policy, key) order), and each queue keeps
-- its place on it (partition_turns, the last partition a claim of it took). admission_room walks
-- the ring from the place and then moves it: round robin.

-- Each queue's place, in p_open's order: the last partition its previous claim took, or the
-- beginning of the ring (-2^31, '', '') for a queue with none yet. Read as committed: a claim of
-- the queue still deciding starts from the same place, and skips the partitions that one holds.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_places(
  p_open text[], OUT rings integer[], OUT policies text[], OUT partition_keys text[]
)
LANGUAGE plpgsql STABLE
SET jit = off
-- Generic plans always (each queue by primary key): left to choose, PostgreSQL planned it afresh
-- on every call (bench/plan-cache.ts).
SET plan_cache_mode = force_generic_plan
AS $fn$
BEGIN
  SELECT array_agg(coalesce(t.ring, -2147483648) ORDER BY q.i), array_agg(coalesce(t.policy, '') ORDER BY q.i),
         array_agg(coalesce(t.partition_key, '') ORDER BY q.i)
  INTO rings, policies, partition_keys
  FROM unnest(p_open) WITH ORDINALITY AS q(name, i)
  LEFT JOIN :SLUICE_SCHEMA.partition_turns t ON t.queue = q.name;
END
$fn$;

-- Moves each queue's place to the last partition a claim took from it, in walk order (the later
-- arc, then the ring). A place another claim of the queue is moving is left to it (SKIP LOCKED),
-- and of two first claims of a queue at once, one makes its place (the other's try for the
-- advisory lock fails): claims never wait on each other here. p_unplaced: some queue had no place
-- when the claim read them (admission_places), so one may need making.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_move_places(
  p_queues text[], p_arcs integer[], p_rings integer[], p_policies text[], p_parts text[], p_unplaced boolean
)
RETURNS void
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
BEGIN
  IF p_unplaced THEN
    INSERT INTO :SLUICE_SCHEMA.partition_turns AS t (queue, ring, policy, partition_key)
    SELECT DISTINCT l.queue, -2147483648, '', '' FROM unnest(p_queues) AS l(queue)
    WHERE CASE WHEN EXISTS (SELECT 1 FROM :SLUICE_SCHEMA.partition_turns h WHERE h.queue = l.queue) THEN false
               ELSE pg_try_advisory_xact_lock(hashtextextended(':SLUICE_SCHEMA.partition_turns/' || l.queue, 0)) END
    ON CONFLICT (queue) DO NOTHING;
  END IF;
  UPDATE :SLUICE_SCHEMA.partition_turns t
  SET ring = l.ring, policy = l.policy, partition_key = l.partition_key
  FROM (
    SELECT DISTINCT ON (x.queue) x.queue, x.ring, x.policy, x.partition_key
    FROM unnest(p_queues, p_arcs, p_rings, p_policies, p_parts) AS x(queue, arc, ring, policy, partition_key)
    ORDER BY x.queue, x.arc DESC, x.ring DESC, x.policy DESC, x.partition_key DESC
  ) l
  WHERE t.queue = l.queue
    AND t.queue IN (SELECT h.queue FROM :SLUICE_SCHEMA.partition_turns h WHERE h.queue = ANY (p_queues)
                    FOR UPDATE SKIP LOCKED);
END
$fn$;
