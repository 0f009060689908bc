/**
 * The drain's deadline: the platform's remaining time and the requested budget, whichever
 * is smaller, less a safety margin kept for settling and answering. The margin is at most a
 * quarter of the time available, so that a short budget (1 s) still leaves time to run jobs.
 */
export function deadlineFrom(options: {
  now: number
  budgetMs: number
  platformRemainingMs?: number | undefined
  safetyMarginMs: number
}): number {
  const available = availableMs(options)
  return options.now + Math.max(0, available - Math.min(options.safetyMarginMs, available / 4))
}

/** The time the drain may use in all, settling included: the budget or the platform's remaining time. */
export function availableMs(options: { budgetMs: number; platformRemainingMs?: number | undefined }): number {
  return Math.min(options.budgetMs, options.platformRemainingMs ?? Number.POSITIVE_INFINITY)
}

/** How often a process reads again the durations recorded in the database (with a first claim). */
export const DURATIONS_REFRESH_MS = 5 * 60_000
/** How far back that read looks, and how many finished runs it reads at most. */
export const DURATIONS_WINDOW_MS = 60 * 60_000
export const DURATIONS_SAMPLE = 5_000

/**
 * Durations per job name: those this process observed (a decaying maximum) and, for names it
 * has not seen run, those the database recorded (the 99th percentile of recent completed runs,
 * read with a drain's first claim at most every DURATIONS_REFRESH_MS). A job is started only
 * when its expected duration fits before the deadline: the figure once there is one (never
 * above the job's timeout), the job's timeout until then.
 */
export class DurationBook {
  private readonly peaks = new Map<string, number>()
  /** Names this process has seen run: its own figures win over the database's. */
  private readonly seen = new Set<string>()
  /** Per source (schema and names), when the database's figures were last read. */
  private readonly read = new Map<string, number>()

  record(name: string, ms: number): void {
    this.seen.add(name)
    const previous = this.peaks.get(name)
    this.peaks.set(name, previous === undefined ? ms : Math.max(ms, previous * 0.9 + ms * 0.1))
  }

  /**
   * Whether the database's figures should be read with the next first claim; `source` says
   * which (the schema and the job names asked about).
   */
  stale(source: string, now = Date.now()): boolean {
    const at = this.read.get(source)
    return at === undefined || now - at >= DURATIONS_REFRESH_MS
  }

  /** What the database recorded (name → ms), for the names this process has not seen run. */
  learn(source: string, recorded: Readonly<Record<string, number>>, now = Date.now()): void {
    this.read.set(source, now)
    for (const [name, ms] of Object.entries(recorded)) {
      if (!this.seen.has(name) && Number.isFinite(ms)) this.peaks.set(name, Math.max(0, ms))
    }
  }

  /** The known pace of `name` with headroom (peak × 1.5 + 10 ms); undefined until known. */
  private pace(name: string): number | undefined {
    const peak = this.peaks.get(name)
    return peak === undefined ? undefined : Math.ceil(peak * 1.5) + 10
  }

  expected(name: string, timeoutMs: number): number {
    return Math.min(timeoutMs, this.pace(name) ?? timeoutMs)
  }

  /**
   * How long `rows` are expected to take with `concurrency` handlers: waves of the slowest
   * expected duration among them (a job's timeout until its duration is known).
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

  /**
   * How many jobs to claim at once: as many as `concurrency` handlers can finish in the time
   * left at the slowest known pace among `names`, between `concurrency` and `max`. Until the
   * duration of every name is known, `concurrency`: a drain learns before it hoards.
   */
  batchSize(names: readonly string[], concurrency: number, max: number, remainingMs: number): number {
    let slowest = 0
    for (const name of names) {
      const pace = this.pace(name)
      if (pace === undefined) return Math.min(concurrency, max)
      slowest = Math.max(slowest, pace)
    }
    const waves = Math.max(1, Math.floor(remainingMs / Math.max(1, slowest)))
    return Math.max(Math.min(concurrency, max), Math.min(max, concurrency * waves))
  }
}

/** Shared across warm invocations of the same function instance. */
export const observedDurations = new DurationBook()
