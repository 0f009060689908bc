/**
 * The drain's deadline: the platform's remaining time and the requested budget, whichever
 * is smaller, less a safety margin kept for settling and answering.
 */
export function deadlineFrom(options: {
  now: number
  budgetMs: number
  platformRemainingMs?: number | undefined
  safetyMarginMs: number
}): number {
  const available = Math.min(options.budgetMs, options.platformRemainingMs ?? Number.POSITIVE_INFINITY)
  return options.now + Math.max(0, available - options.safetyMarginMs)
}

/**
 * Durations this process has observed, per job name. A job is started only when its
 * expected duration fits before the deadline: the observed figure once there is one
 * (a decaying maximum, never above the job's timeout), the job's timeout until then.
 */
export class DurationBook {
  private readonly peaks = new Map<string, number>()

  record(name: string, ms: number): void {
    const previous = this.peaks.get(name)
    this.peaks.set(name, previous === undefined ? ms : Math.max(ms, previous * 0.9 + ms * 0.1))
  }

  /** The observed pace of `name` with headroom (peak × 1.5 + 10 ms); undefined until seen. */
  private pace(name: string): number | undefined {
    const peak = this.peaks.get(name)
    return peak === undefined ? undefined : Math.ceil(peak * 1.5) + 10
  }

  expected(name: string, timeoutMs: number): number {
    return Math.min(timeoutMs, this.pace(name) ?? timeoutMs)
  }

  /**
   * How long `rows` are expected to take with `concurrency` handlers: waves of the slowest
   * expected duration among them (a job's timeout until it has been seen).
   */
  batchMs(
    rows: readonly { name: string }[],
    jobs: ReadonlyMap<string, { timeout: number }>,
    concurrency: number,
  ): number {
    let slowest = 0
    for (const row of rows)
      slowest = Math.max(slowest, this.expected(row.name, jobs.get(row.name)?.timeout ?? 0))
    return Math.ceil(rows.length / concurrency) * slowest
  }

  /** The shortest expected duration among `names`, once every one has been seen; else 0. */
  fastest(names: readonly string[]): number {
    let fastest = Number.POSITIVE_INFINITY
    for (const name of names) {
      const pace = this.pace(name)
      if (pace === undefined) return 0
      fastest = Math.min(fastest, pace)
    }
    return Number.isFinite(fastest) ? fastest : 0
  }

  /**
   * How many jobs to claim at once: as many as `concurrency` handlers can finish in the time
   * left at the slowest observed pace among `names`, between `concurrency` and `max`. Until
   * a job of every name has been seen, `concurrency`: a drain learns before it hoards.
   */
  batchSize(names: readonly string[], concurrency: number, max: number, remainingMs: number): number {
    let slowest = 0
    for (const name of names) {
      const pace = this.pace(name)
      if (pace === undefined) return Math.min(concurrency, max)
      slowest = Math.max(slowest, pace)
    }
    const waves = Math.max(1, Math.floor(remainingMs / slowest))
    return Math.max(Math.min(concurrency, max), Math.min(max, concurrency * waves))
  }
}

/** Shared across warm invocations of the same function instance. */
export const observedDurations = new DurationBook()
