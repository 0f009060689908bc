import type { Measurement } from './types.js'

export interface TargetResult {
  target: string
  /** The measured figure the target is checked on (a ratio or a count). */
  measured: number | null
  threshold: string
  status: 'PASS' | 'MISS' | 'n/a'
  detail: string
}

interface Target {
  target: string
  threshold: string
  check(
    find: (id: string) => Measurement | undefined,
  ): { measured: number; pass: boolean; detail: string } | undefined
}

const ratio = (
  find: (id: string) => Measurement | undefined,
  a: string,
  b: string,
  min: number,
): { measured: number; pass: boolean; detail: string } | undefined => {
  const x = find(a)
  const y = find(b)
  if (!x || !y) return undefined
  const measured = x.value / y.value
  return { measured, pass: measured >= min, detail: `${x.value} / ${y.value} ${x.unit}` }
}

const count = (
  find: (id: string) => Measurement | undefined,
  id: string,
  max: number,
): { measured: number; pass: boolean; detail: string } | undefined => {
  const m = find(id)
  if (!m) return undefined
  return { measured: m.value, pass: m.value <= max, detail: m.label }
}

/** Sluice's cost per job against a peer's, from the two runs' CPU and WAL (lower is better). */
const costAtMost = (
  find: (id: string) => Measurement | undefined,
  a: string,
  b: string,
  what: 'serverUs' | 'walBytes',
): { measured: number; pass: boolean; detail: string } | undefined => {
  const x = find(a)?.cost?.[what]
  const y = find(b)?.cost?.[what]
  if (x === undefined || x === null || y === undefined || y === null) return undefined
  const unit = what === 'serverUs' ? 'µs' : 'B'
  return { measured: x / y, pass: x <= y, detail: `${x} / ${y} ${unit} per job` }
}

/** Sluice's single-job invocation (cold, p50) over graphile-worker's at one network delay. */
const singleAtMost = (
  find: (id: string) => Measurement | undefined,
  delayMs: number,
  max: number,
): { measured: number; pass: boolean; detail: string } | undefined => {
  const x = find(`network.single.sluice.${delayMs}`)
  const y = find(`network.single.graphile.${delayMs}`)
  if (!x || !y) return undefined
  const measured = x.value / y.value
  return { measured, pass: measured <= max, detail: `${x.value} / ${y.value} ms` }
}

/** The targets bench/README.md states, checked on every run (printed, never asserted). */
export const TARGETS: Target[] = [
  {
    target: 'Processing ≥ 1.5× graphile-worker with batching',
    threshold: '≥ 1.5×',
    check: (find) => ratio(find, 'processing.sluice.drain', 'processing.graphile.batched', 1.5),
  },
  {
    target: 'Processing ≥ 1.2× graphile-worker with batching',
    threshold: '≥ 1.2×',
    check: (find) => ratio(find, 'processing.sluice.drain', 'processing.graphile.batched', 1.2),
  },
  {
    target: 'Server CPU per job ≤ graphile-worker with batching',
    threshold: '≤ 1×',
    check: (find) => costAtMost(find, 'processing.sluice.drain', 'processing.graphile.batched', 'serverUs'),
  },
  {
    target: 'WAL per job ≤ graphile-worker with batching',
    threshold: '≤ 1×',
    check: (find) => costAtMost(find, 'processing.sluice.drain', 'processing.graphile.batched', 'walBytes'),
  },
  {
    target: 'Processing ≥ 0.8× the raw claim-and-delete probe',
    threshold: '≥ 0.8×',
    check: (find) => ratio(find, 'processing.sluice.drain', 'raw.delete', 0.8),
  },
  {
    target: 'Bulk enqueue ≥ 2× graphile-worker addJobs',
    threshold: '≥ 2×',
    check: (find) => ratio(find, 'enqueue.sluice.enqueueMany', 'enqueue.graphile.addJobs', 2),
  },
  {
    target: 'Bulk enqueue ≥ 2× pg-boss insert',
    threshold: '≥ 2×',
    check: (find) => ratio(find, 'enqueue.sluice.enqueueMany', 'enqueue.pgboss.insert', 2),
  },
  {
    target: 'Processing at 5 ms round trip ≥ 2× graphile-worker with batching',
    threshold: '≥ 2×',
    check: (find) => ratio(find, 'network.sluice.5', 'network.graphile.5', 2),
  },
  {
    target: 'Single-job drain at 0 ms round trip ≤ 1.0× graphile-worker runOnce (cold, p50)',
    threshold: '≤ 1×',
    check: (find) => singleAtMost(find, 0, 1),
  },
  {
    target: 'Single-job drain at 5 ms round trip ≤ 0.5× graphile-worker runOnce (cold, p50)',
    threshold: '≤ 0.5×',
    check: (find) => singleAtMost(find, 5, 0.5),
  },
  {
    target: 'Throughput with a held xmin horizon ≥ 0.8× without',
    threshold: '≥ 0.8×',
    check: (find) => {
      const m = find('held.sluice.ratio')
      if (!m) return undefined
      return { measured: m.value, pass: m.value >= 0.8, detail: m.display ?? m.label }
    },
  },
  {
    target: '1 statement per enqueue',
    threshold: '≤ 1',
    check: (find) => count(find, 'statements.enqueue', 1),
  },
  {
    target: '1 statement per enqueueMany call',
    threshold: '≤ 1',
    check: (find) => count(find, 'statements.enqueueMany', 1),
  },
  {
    target: '≤ 3 statements per drained batch',
    threshold: '≤ 3',
    check: (find) => count(find, 'statements.batch', 3),
  },
  {
    target: 'Claim p50 at the largest backlog within 2× of an empty queue',
    threshold: '≤ 2×',
    check: (find) => {
      const m = find('claim.p50-growth')
      if (!m) return undefined
      return { measured: m.value, pass: m.value <= 2, detail: m.label }
    },
  },
]

export function evaluateTargets(measurements: readonly Measurement[]): TargetResult[] {
  const find = (id: string): Measurement | undefined => measurements.find((m) => m.id === id)
  return TARGETS.map((t) => {
    const r = t.check(find)
    if (!r)
      return { target: t.target, measured: null, threshold: t.threshold, status: 'n/a', detail: 'not run' }
    return {
      target: t.target,
      measured: Math.round(r.measured * 100) / 100,
      threshold: t.threshold,
      status: r.pass ? 'PASS' : 'MISS',
      detail: r.detail,
    }
  })
}
