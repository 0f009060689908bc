-- A claim writes a new version of each job it leases (the lease is in indexed columns, so the
-- update is not HOT). When that version does not fit on the job's page, PostgreSQL puts it on
-- another page and first writes a WAL record locking the old one while it leaves the page: about
-- 100 B of WAL a job more than an update in place, with a larger update record. Pages filled to
-- 35 % leave room for every job's leased version, and its retry's (bench/README.md, "WAL").
-- The setting applies to pages filled from now on; it takes no lock that waits on claims or
-- settles (SHARE UPDATE EXCLUSIVE).
ALTER TABLE :SLUICE_SCHEMA.jobs SET (fillfactor = 35);
