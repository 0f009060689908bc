-- The jobs waiting for a retry, by queue and due time: the overview counts a queue's retrying
-- jobs exactly from this index (index-only, capped) however many scheduled jobs share the queue.
-- A row enters it only when an attempt fails with attempts left (settle clears the lease token);
-- enqueue (attempts 0), claim (a lease token) and success (the row leaves) add no entry.
CREATE INDEX jobs_retrying ON :SLUICE_SCHEMA.jobs (queue, run_at) WHERE attempts > 0 AND lease_token IS NULL;
