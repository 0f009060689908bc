/**
 * An admission log: a trigger on the test schema's jobs table records every claim of a job
 * under an admission policy, in the claim's own transaction, so tests read admissions on the
 * database's clock rather than the test process's.
 *
 * Each row: the job, its policy and partition, `claimed_at` (the claim transaction's now(), the
 * instant the gates were decided at), `logged_at` (clock_timestamp() while the claim holds its
 * partitions' row locks: claims of one partition are logged in the order they held the lock),
 * `claim` (the claim's transaction id, one per claim statement), `lease_until` (the new run_at)
 * and the invocation that claimed it.
 */

export interface SqlRunner {
  sql<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<R[]>
}

/** Installs the log in the schema `$schema` names (TestSluice.sql quoting). */
export async function logAdmissions(env: SqlRunner): Promise<void> {
  await env.sql(`CREATE TABLE $schema.admission_log (
    seq bigserial PRIMARY KEY,
    job_id bigint NOT NULL,
    policy text,
    partition_key text,
    claimed_at timestamptz NOT NULL,
    logged_at timestamptz NOT NULL,
    claim bigint NOT NULL,
    lease_until timestamptz NOT NULL,
    invocation text
  )`)
  await env.sql(`CREATE FUNCTION $schema.log_admission() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    INSERT INTO $schema.admission_log (job_id, policy, partition_key, claimed_at, logged_at, claim, lease_until, invocation)
    VALUES (NEW.id, NEW.policy, NEW.partition_key, now(), clock_timestamp(), txid_current(), NEW.run_at, NEW.leased_by);
    RETURN NULL;
  END
  $fn$`)
  // A claim is the only writer that gives a job a new lease token.
  await env.sql(`CREATE TRIGGER log_admission AFTER UPDATE OF lease_token ON $schema.jobs
    FOR EACH ROW WHEN (NEW.lease_token IS NOT NULL AND NEW.lease_token IS DISTINCT FROM OLD.lease_token)
    EXECUTE FUNCTION $schema.log_admission()`)
}
