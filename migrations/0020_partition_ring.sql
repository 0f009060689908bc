-- Admission's turn order without an index that every admission rewrites (docs/admission.md).
--
-- A claim visited a queue's partitions least recently admitted first, on an index of
-- last_admitted_at. Each admission moved its partition in that index, so the update of the
-- partition's row (tokens paid, last admission) was never a HOT update, and the index filled with
-- dead entries ahead of the live ones, which every claim read again until a vacuum.
--
-- Now each partition has a fixed place on its queue's ring (`ring`, a hash of its policy and key,
-- ties ordered by policy and key), and each queue keeps its place on the ring (partition_turns):
-- a claim goes on from the partition after the last one the queue's previous claim took, round
-- robin. Nothing a claim updates on a partition is indexed, and the table leaves room on each page
-- for the new versions, so those updates stay on their page.

-- The fillfactor first: adding a stored column rewrites the table, which then leaves the room.
ALTER TABLE :SLUICE_SCHEMA.partitions SET (fillfactor = 50);

ALTER TABLE :SLUICE_SCHEMA.partitions
  ADD COLUMN ring integer NOT NULL GENERATED ALWAYS AS (hashtext(policy || '/' || partition_key)) STORED;

CREATE INDEX partitions_ring ON :SLUICE_SCHEMA.partitions (queue, ring, policy, partition_key);

DROP INDEX :SLUICE_SCHEMA.partitions_turn;

-- Each queue's place on the ring: the last partition a claim of it took (admission_room). Unlogged:
-- its updates cost no WAL, and a crash, which empties it, only sends each queue's next claim to
-- the beginning of its ring.
CREATE UNLOGGED TABLE :SLUICE_SCHEMA.partition_turns (
  queue text PRIMARY KEY,
  ring integer NOT NULL,
  policy text NOT NULL,
  partition_key text NOT NULL
);
