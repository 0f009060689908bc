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

  expected(name: string, timeoutMs: number): number {
    const peak = this.peaks.get(name)
    return peak === undefined ? timeoutMs : Math.min(timeoutMs, Math.ceil(peak * 1.5) + 10)
  }
}

/** Shared across warm invocations of the same function instance. */
export const observedDurations = new DurationBook()
