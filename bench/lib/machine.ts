import { cpus, totalmem } from 'node:os'
import type pg from 'pg'

export interface MachineInfo {
  cpu: string
  cores: number
  memoryGiB: number
  node: string
  platform: string
  postgres: string
  /** Server settings that move the numbers most. */
  settings: Record<string, string>
}

const SETTINGS = ['fsync', 'synchronous_commit', 'shared_buffers', 'work_mem', 'max_wal_size', 'jit']

export async function describeMachine(admin: pg.Pool): Promise<MachineInfo> {
  const { rows } = await admin.query<{ version: string }>('SELECT version()')
  const settings = await admin.query<{ name: string; setting: string; unit: string | null }>(
    'SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1::text[]) ORDER BY name',
    [SETTINGS],
  )
  const list = cpus()
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    postgres: rows[0]?.version.replace(/ on .*/, '') ?? 'unknown',
    settings: Object.fromEntries(
      settings.rows.map((r) => [
        r.name,
        r.unit === '8kB' ? `${(Number(r.setting) * 8) / 1024}MB` : r.setting,
      ]),
    ),
  }
}

export function machineLine(m: MachineInfo): string {
  const s = Object.entries(m.settings)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')
  return `${m.postgres} (${s}); ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB; Node ${m.node} ${m.platform}`
}
