import type { Measurement } from './types.js'

/** Percentile by nearest rank over a copy of `values` (ms or any unit). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}

export interface Summary {
  n: number
  mean: number
  p50: number
  p90: number
  p99: number
  max: number
}

export function summarize(values: readonly number[]): Summary {
  const n = values.length
  const mean = n === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / n
  return {
    n,
    mean: round(mean),
    p50: round(percentile(values, 50)),
    p90: round(percentile(values, 90)),
    p99: round(percentile(values, 99)),
    max: round(n === 0 ? Number.NaN : Math.max(...values)),
  }
}

export function round(value: number, digits = 3): number {
  const f = 10 ** digits
  return Math.round(value * f) / f
}

/** Runs `fn` and returns its result with the elapsed wall time in ms. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now()
  const result = await fn()
  return { result, ms: performance.now() - started }
}

export const perSecond = (count: number, ms: number): number => Math.round((count / ms) * 1000)

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Sluice's latencies (ms) as one measurement: p50 as its value, p50 and p99 shown, every percentile kept. */
export function latencyMeasurement(
  scenario: string,
  id: string,
  label: string,
  values: readonly number[],
): Measurement {
  const s = summarize(values)
  return {
    id,
    scenario,
    system: 'sluice',
    label,
    value: s.p50,
    unit: 'ms',
    display: `p50 ${s.p50} ms · p99 ${s.p99} ms (${s.n} jobs)`,
    details: { ...s },
  }
}
