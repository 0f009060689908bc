-- A subscriber's admission policy (static settings, and where its partition key is read from
-- in the event), applied by publish to the jobs it writes.
ALTER TABLE :SLUICE_SCHEMA.subscriptions ADD COLUMN admission jsonb;
