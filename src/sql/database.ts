import type { Statement } from '../db/types.js'

/** One of Sluice's tables, from the statistics collector. */
export interface TableHealth {
  table: string
  liveTuples: number
  deadTuples: number
  /** dead / (live + dead), 0..1: an estimate of the bloat vacuum has yet to reclaim; null for an empty table. */
  bloat: number | null
  /** Table, indexes and TOAST, bytes. */
  bytes: number
  lastAutovacuum: string | null
  lastAutoanalyze: string | null
  secondsSinceAutovacuum: number | null
  secondsSinceAutoanalyze: number | null
}

/** What holds the xmin horizon back: a transaction, a replication slot or a prepared transaction. */
export interface HorizonHolder {
  kind: 'transaction' | 'replication slot' | 'prepared transaction'
  pid: number | null
  /** The slot's name or the prepared transaction's gid. */
  name: string | null
  state: string | null
  applicationName: string | null
  /** The first 200 characters of its current or last statement; null unless asked for. */
  query: string | null
  /** How many transactions old its xmin is. */
  xminAge: number
  /** How long its transaction has been open (or prepared), seconds; null for a slot. */
  heldSeconds: number | null
}

export interface DatabaseHealth {
  now: string
  tables: TableHealth[]
  /** The oldest five, oldest first: dead rows newer than the first cannot be vacuumed. */
  horizon: HorizonHolder[]
  /** Set when the oldest holder is past a threshold while the jobs table has dead rows. */
  warning: string | null
}

export interface HorizonThresholds {
  /** Warn past this many transactions of xmin age. Default 10,000. */
  xminAge: number
  /** Warn when a transaction has been open this long, ms. Default 60,000. */
  heldMs: number
}

export const HORIZON_THRESHOLDS: HorizonThresholds = { xminAge: 10_000, heldMs: 60_000 }

/**
 * Sluice's tables' tuples, bloat, size and autovacuum, and what holds the xmin horizon (in this
 * database: other databases' transactions do not hold its tables' rows), in one statement.
 * A horizon held back keeps the dead rows of completed jobs in the jobs table, which the claim
 * then walks past in its index.
 */
export function databaseHealth(schema: string, thresholds: HorizonThresholds, queries: boolean): Statement {
  return {
    text: `WITH tables AS (
  SELECT s.relname AS table_name, s.n_live_tup AS live, s.n_dead_tup AS dead, pg_total_relation_size(s.relid) AS bytes,
         s.last_autovacuum, s.last_autoanalyze
  FROM pg_stat_user_tables s WHERE s.schemaname = $1
), holders AS (
  SELECT 'transaction' AS kind, a.pid, NULL::text AS name, a.state, a.application_name,
         CASE WHEN $4::boolean THEN left(a.query, 200) END AS query,
         age(a.backend_xmin)::float8 AS xmin_age, extract(epoch FROM now() - a.xact_start)::float8 AS held
  FROM pg_stat_activity a
  WHERE a.backend_xmin IS NOT NULL AND a.pid <> pg_backend_pid() AND a.datname = current_database()
  UNION ALL
  SELECT 'replication slot', NULL, s.slot_name::text, NULL, NULL, NULL,
         greatest(age(s.xmin), age(s.catalog_xmin))::float8, NULL
  FROM pg_replication_slots s WHERE s.xmin IS NOT NULL OR s.catalog_xmin IS NOT NULL
  UNION ALL
  SELECT 'prepared transaction', NULL, p.gid, NULL, NULL, NULL, age(p.transaction)::float8,
         extract(epoch FROM now() - p.prepared)::float8
  FROM pg_prepared_xacts p WHERE p.database = current_database()
), oldest AS (
  SELECT * FROM holders ORDER BY xmin_age DESC, held DESC NULLS LAST LIMIT 5
)
SELECT to_json(now()) #>> '{}' AS now,
  (SELECT coalesce(json_agg(json_build_object(
      'table', t.table_name, 'liveTuples', t.live::float8, 'deadTuples', t.dead::float8,
      'bloat', (t.dead::float8 / nullif(t.live + t.dead, 0)), 'bytes', t.bytes::float8,
      'lastAutovacuum', t.last_autovacuum, 'lastAutoanalyze', t.last_autoanalyze,
      'secondsSinceAutovacuum', extract(epoch FROM now() - t.last_autovacuum)::float8,
      'secondsSinceAutoanalyze', extract(epoch FROM now() - t.last_autoanalyze)::float8) ORDER BY t.table_name), '[]'::json)
   FROM tables t) AS tables,
  (SELECT coalesce(json_agg(json_build_object(
      'kind', o.kind, 'pid', o.pid, 'name', o.name, 'state', o.state, 'applicationName', o.application_name,
      'query', o.query, 'xminAge', o.xmin_age, 'heldSeconds', o.held) ORDER BY o.xmin_age DESC, o.held DESC NULLS LAST),
      '[]'::json)
   FROM oldest o) AS horizon,
  (SELECT format('%s %s has held the xmin horizon back %s transactions%s: the %s dead rows of the jobs table cannot be vacuumed, and the claim walks past them',
                 o.kind, coalesce('pid ' || o.pid || coalesce(' (' || nullif(o.application_name, '') || ')', ''), o.name),
                 o.xmin_age, coalesce(' for ' || round(o.held::numeric) || ' s', ''), j.dead)
   FROM (SELECT * FROM oldest ORDER BY xmin_age DESC, held DESC NULLS LAST LIMIT 1) o, tables j
   WHERE j.table_name = 'jobs' AND j.dead > 0 AND (o.xmin_age > $2 OR o.held * 1000 > $3)) AS warning`,
    values: [schema, thresholds.xminAge, thresholds.heldMs, queries],
  }
}
