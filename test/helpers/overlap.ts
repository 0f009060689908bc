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

/** Runs `count` drains in parallel, each looping until it finds nothing. */
export async function drainAll(
  drains: readonly { drain(o?: object): Promise<{ claimed: number; completed: number }> }[],
  options: object = {},
  rounds = 1000,
): Promise<number> {
  const totals = await Promise.all(
    drains.map(async (s) => {
      let done = 0
      let idle = 0
      for (let i = 0; i < rounds && idle < 3; i++) {
        const summary = await s.drain(options)
        done += summary.completed
        if (summary.claimed === 0) {
          idle++
          await sleep(20)
        } else idle = 0
      }
      return done
    }),
  )
  return totals.reduce((a, b) => a + b, 0)
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
