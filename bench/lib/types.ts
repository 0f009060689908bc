import type pg from 'pg'

export type Size = 'quick' | 'full'

/** Everything a scenario needs: the fresh database, the run's size and a place to log progress. */
export interface BenchContext {
  size: Size
  /** URL of the fresh database created for this run. */
  url: string
  /** A small pool for setup and inspection queries (never used by a measured system). */
  admin: pg.Pool
  log(message: string): void
  /** Measurements of scenarios that ran earlier in this run (for ratios across scenarios). */
  earlier: readonly Measurement[]
}

/** One number a scenario measured. `id` is stable across runs (targets and ratios refer to it). */
export interface Measurement {
  id: string
  scenario: string
  system: 'sluice' | 'graphile-worker' | 'pg-boss' | 'raw'
  /** What was run and how it was configured, in a few words. */
  label: string
  value: number
  unit: string
  /** How the table shows the value, when `value unit` is not enough (e.g. "p50 0.6 ms · p99 1.2 ms"). */
  display?: string
  /** CPU and WAL per job, when the scenario measured them (see lib/cpu.ts). */
  cost?: { serverUs: number | null; clientUs: number; walBytes: number }
  /** Sluice's value over this one (jobs/s and other higher-is-better figures), when it applies. */
  ratio?: { of: string; value: number }
  /** Free-form details kept in the JSON (latency percentiles, statement counts, plans...). */
  details?: Record<string, unknown>
}

export interface ScenarioResult {
  measurements: Measurement[]
  /** Extra material for the JSON output only (query plans, raw samples). */
  attachments?: Record<string, unknown>
  /** Lines printed under the scenario's table. */
  notes?: string[]
}

/** A scenario is a module under bench/scenarios/ exporting one of these. */
export interface Scenario {
  name: string
  title: string
  run(ctx: BenchContext): Promise<ScenarioResult>
}
