import type { Statement } from '../db/types.js'

export interface InvocationRow {
  id: string
  queues: string[]
  priority: number
  startedAt: string
  expiresAt: string
  jobsDone: number
  /** False once the lease ran out: the drain died; maintenance reaps the row. */
  live: boolean
}

export interface MaintenanceRow {
  task: string
  lastStartedAt: string
  nextRunAt: string
  lastRows: number | null
  lastError: string | null
}

export interface StatusRow {
  /** The database's clock, so that ages are not skewed by this machine's. */
  now: string
  version: number
  invocations: InvocationRow[]
  maintenance: MaintenanceRow[]
}

const INVOCATION_COLUMNS = `id, queues, priority, started_at AS "startedAt", expires_at AS "expiresAt",
            jobs_done AS "jobsDone", expires_at > now() AS live`

/** The drains running (and those whose lease ran out, not yet reaped), oldest first, at most 100. */
export function invocations(t: string): Statement {
  return {
    text: `SELECT ${INVOCATION_COLUMNS} FROM ${t}.invocations ORDER BY started_at, id LIMIT 100`,
    values: [],
  }
}

/** The drains running and the maintenance tasks' last runs, in one statement (for `sluice status`). */
export function status(t: string): Statement {
  return {
    text: `SELECT to_json(now()) #>> '{}' AS now,
  (SELECT coalesce(max(version), 0) FROM ${t}.migrations)::int AS version,
  (SELECT coalesce(json_agg(i ORDER BY i."startedAt", i.id), '[]'::json) FROM (
     SELECT ${INVOCATION_COLUMNS}
     FROM ${t}.invocations ORDER BY started_at LIMIT 100) i) AS invocations,
  (SELECT coalesce(json_agg(m ORDER BY m.task), '[]'::json) FROM (
     SELECT task, last_started_at AS "lastStartedAt", next_run_at AS "nextRunAt", last_rows AS "lastRows",
            last_error AS "lastError"
     FROM ${t}.maintenance) m) AS maintenance`,
    values: [],
  }
}
