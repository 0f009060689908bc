-- A queue can keep no archive (docs/configuration.md, `archive: false`): its completed and
-- expired jobs are deleted as they settle, counted in job_stats, and not written to `archive`.
-- That saves the archive's row and primary-key entry per job. Every queue archives, as before,
-- until its settings say otherwise.
ALTER TABLE :SLUICE_SCHEMA.queues ADD COLUMN archive boolean NOT NULL DEFAULT true;

-- The settle reads the few queues that keep no archive on every call; without them it reads nothing.
CREATE INDEX queues_unarchived ON :SLUICE_SCHEMA.queues (name) WHERE NOT archive;
