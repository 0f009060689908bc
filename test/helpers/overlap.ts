/** Records handler executions to measure how many ran at once. */
export class OverlapRecorder {
  private running = 0
  max = 0
  readonly starts: { key: string; at: number }[] = []
  readonly ends = new Map<string, number>()

  /** Runs in progress now. */
  get current(): number {
    return this.running
  }

  async track<T>(key: string, fn: () => Promise<T>): Promise<T> {
    this.running++
    this.max = Math.max(this.max, this.running)
    this.starts.push({ key, at: performance.now() })
    try {
      return await fn()
    } finally {
      this.running--
      this.ends.set(key, performance.now())
    }
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Runs the drains in parallel, each looping until it finds nothing three times in a row. With
 * `total`, until the drains have completed that many jobs between them instead, whatever pauses
 * meet them on the way (a queue held for a retry, a lease changing hands): a loaded machine
 * stretches those past any count of idle rounds. `rounds` bounds either loop.
 */
export async function drainAll(
  drains: readonly { drain(o?: object): Promise<{ claimed: number; completed: number }> }[],
  options: object = {},
  limits: number | { rounds?: number; total?: number } = {},
): Promise<number> {
  const { rounds = 1000, total } = typeof limits === 'number' ? { rounds: limits } : limits
  let completed = 0
  await Promise.all(
    drains.map(async (s) => {
      let idle = 0
      for (let i = 0; i < rounds && (total === undefined ? idle < 3 : completed < total); i++) {
        const summary = await s.drain(options)
        completed += summary.completed
        if (summary.claimed === 0) {
          idle++
          await sleep(20)
        } else idle = 0
      }
    }),
  )
  return completed
}

/** A statement's time in flight. */
export interface Span {
  from: number
  to: number
}

/** The most spans in flight at one moment. */
export function mostAtOnce(spans: readonly Span[]): number {
  const edges = spans.flatMap((s) => [
    { at: s.from, d: 1 },
    { at: s.to, d: -1 },
  ])
  edges.sort((a, b) => a.at - b.at || a.d - b.d)
  let now = 0
  let most = 0
  for (const e of edges) {
    now += e.d
    most = Math.max(most, now)
  }
  return most
}
