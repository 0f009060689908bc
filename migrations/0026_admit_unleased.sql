-- A leased job is not waiting, under an admission policy as without one (migration 0025):
-- jobs_admit keeps only the policy jobs that wait (no lease). A claim wrote a new entry there for
-- every job it admitted, and each partition's walk and due check passed the partition's jobs in
-- flight. Admitted jobs whose lease ran out, which a claim takes again, are found on
-- jobs_admitted (policy, partition, lease's end), which the running counts already read: the
-- range of ended leases, empty but for them. Rebuilt under the migration's lock.
DROP INDEX :SLUICE_SCHEMA.jobs_admit;
CREATE INDEX jobs_admit ON :SLUICE_SCHEMA.jobs (policy, partition_key, priority, run_at, id)
  WHERE policy IS NOT NULL AND lease_token IS NULL;
