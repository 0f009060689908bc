import { readFile } from 'node:fs/promises'
import type pg from 'pg'

/**
 * CPU time, which contention on a shared machine disturbs far less than wall time: the
 * benchmark process's own (process.cpuUsage) and the server backends' connected to the bench
 * database (utime + stime from /proc, so only when the server runs on this machine), plus
 * the WAL the run wrote.
 */
export interface CpuSnapshot {
  client: NodeJS.CpuUsage
  backends: Map<number, number> | undefined
  walLsn: string
}

export interface CpuUse {
  clientMs: number
  /** Null when the server's processes cannot be read (a remote server). */
  serverMs: number | null
  walBytes: number
}

const TICK_MS = 10 // USER_HZ is 100 on Linux

async function ticks(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // Fields 14 and 15 of stat (utime, stime) are 12 and 13 after the command name.
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return undefined
  }
}

async function backends(admin: pg.Pool): Promise<Map<number, number> | undefined> {
  const { rows } = await admin.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  )
  const out = new Map<number, number>()
  for (const { pid } of rows) {
    const t = await ticks(pid)
    if (t === undefined) return undefined
    out.set(pid, t)
  }
  return out
}

export async function cpuSnapshot(admin: pg.Pool): Promise<CpuSnapshot> {
  const { rows } = await admin.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')
  return { client: process.cpuUsage(), backends: await backends(admin), walLsn: rows[0]!.lsn }
}

/**
 * CPU used since `before`. Backends that connected after the snapshot count from zero;
 * ones that left in between are lost, so systems under test keep their pools open until
 * this is taken.
 */
export async function cpuSince(admin: pg.Pool, before: CpuSnapshot): Promise<CpuUse> {
  const client = process.cpuUsage(before.client)
  const { rows } = await admin.query<{ bytes: string }>(
    'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS bytes',
    [before.walLsn],
  )
  const now = await backends(admin)
  let serverMs: number | null = null
  if (before.backends && now) {
    let sum = 0
    for (const [pid, t] of now) sum += t - (before.backends.get(pid) ?? 0)
    serverMs = sum * TICK_MS
  }
  return { clientMs: (client.user + client.system) / 1000, serverMs, walBytes: Number(rows[0]!.bytes) }
}

/** Runs `fn` between two snapshots; returns its result, the wall time and the cost per item. */
export async function metered<T>(
  admin: pg.Pool,
  items: number,
  fn: () => Promise<T>,
): Promise<{ result: T; ms: number; cost: { serverUs: number | null; clientUs: number; walBytes: number } }> {
  const before = await cpuSnapshot(admin)
  const started = performance.now()
  const result = await fn()
  const ms = performance.now() - started
  const use = await cpuSince(admin, before)
  return {
    result,
    ms,
    cost: {
      serverUs: use.serverMs === null ? null : Math.round((use.serverMs * 1000) / items),
      clientUs: Math.round((use.clientMs * 1000) / items),
      walBytes: Math.round(use.walBytes / items),
    },
  }
}
