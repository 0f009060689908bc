import { describe, expect, test } from 'vitest'
import { evaluateTargets } from '../../bench/lib/targets.js'
import type { Measurement } from '../../bench/lib/types.js'

const m = (id: string, value: number, cost?: Measurement['cost']): Measurement => ({
  id,
  scenario: 'x',
  system: 'sluice',
  label: id,
  value,
  unit: 'jobs/s',
  ...(cost ? { cost } : {}),
})

describe('bench targets', () => {
  test("per-job server CPU and WAL against graphile-worker's, the 1.2× bar and the cold single job at +0 ms", () => {
    const results = evaluateTargets([
      m('processing.sluice.drain', 13_000, { serverUs: 50, clientUs: 20, walBytes: 1_000 }),
      m('processing.graphile.batched', 10_000, { serverUs: 30, clientUs: 25, walBytes: 1_200 }),
      m('network.single.sluice.0', 20, undefined),
      m('network.single.graphile.0', 25, undefined),
    ])
    const by = (t: string) => results.find((r) => r.target.startsWith(t))!
    expect(by('Processing ≥ 1.2×')).toMatchObject({ status: 'PASS', measured: 1.3 })
    expect(by('Processing ≥ 1.5×')).toMatchObject({ status: 'MISS' })
    expect(by('Server CPU per job')).toMatchObject({
      status: 'MISS',
      measured: 1.67,
      detail: '50 / 30 µs per job',
    })
    expect(by('WAL per job')).toMatchObject({ status: 'PASS', measured: 0.83 })
    expect(by('Single-job drain at 0 ms')).toMatchObject({ status: 'PASS', measured: 0.8 })
    expect(by('Single-job drain at 5 ms')).toMatchObject({ status: 'n/a' })
  })
})
