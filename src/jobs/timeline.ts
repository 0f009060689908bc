/**
 * A job's attempts, read from what the database keeps of them: each failed attempt's entry in the
 * job's error history (stamped when its settle ran, with its number, how long it ran and the
 * drain invocation that ran it); for a running job, when its claim took it and the invocation
 * holding its lease; for an archived job, its last attempt (its end, duration and invocation).
 */

/** One attempt of a job, newest last. */
export interface JobAttempt {
  attempt: number
  outcome: 'running' | 'failed' | 'completed' | 'expired'
  /**
   * The end minus the duration; for a running attempt, when its claim took it. Null when the
   * duration was not recorded (entries of older versions).
   */
  startedAt: string | null
  /** When its settle recorded its outcome; null while it runs. */
  endedAt: string | null
  durationMs: number | null
  /** The drain invocation that ran it (or runs it). */
  invocation: string | null
  error: { name: string | null; message: string | null; code: string | null } | null
}

/** An entry of a job's error history, as the settle writes it. */
interface ErrorEntry {
  name?: unknown
  message?: unknown
  code?: unknown
  at?: unknown
  attempt?: unknown
  durationMs?: unknown
  invocation?: unknown
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null)
const count = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null)

function failed(entry: ErrorEntry, index: number): JobAttempt {
  const endedAt = text(entry.at)
  const durationMs = count(entry.durationMs)
  const end = endedAt === null ? Number.NaN : new Date(endedAt).getTime()
  return {
    attempt: count(entry.attempt) ?? index + 1,
    outcome: 'failed',
    startedAt: durationMs === null || Number.isNaN(end) ? null : new Date(end - durationMs).toISOString(),
    endedAt: Number.isNaN(end) ? endedAt : new Date(end).toISOString(),
    durationMs,
    invocation: text(entry.invocation),
    error: { name: text(entry.name), message: text(entry.message), code: text(entry.code) },
  }
}

/** A job's last attempt as the archive keeps it. */
export interface LastAttempt {
  outcome: 'completed' | 'expired'
  endedAt: Date
  durationMs: number | null
  invocation: string | null
}

/** The attempt running now: when its claim took it and the invocation holding its lease. */
export interface RunningAttempt {
  startedAt: Date | null
  invocation: string
}

/**
 * The attempts of a job whose error history is `errors` (the last ten failures), which has made
 * `attempts` attempts and either runs one now (`running`) or ended with an archived one (`last`).
 */
export function attemptsTimeline(
  errors: readonly unknown[],
  attempts: number,
  now: { running?: RunningAttempt | null; last?: LastAttempt | null } = {},
): JobAttempt[] {
  const timeline = errors
    .filter((e): e is ErrorEntry => typeof e === 'object' && e !== null)
    .map((e, i) => failed(e, i))
  const { running, last } = now
  if (running)
    timeline.push({
      attempt: attempts,
      outcome: 'running',
      startedAt: running.startedAt?.toISOString() ?? null,
      endedAt: null,
      durationMs: null,
      invocation: running.invocation,
      error: null,
    })
  else if (last) {
    const end = last.endedAt.getTime()
    timeline.push({
      attempt: attempts,
      outcome: last.outcome,
      startedAt: last.durationMs === null ? null : new Date(end - last.durationMs).toISOString(),
      endedAt: last.endedAt.toISOString(),
      durationMs: last.durationMs,
      invocation: last.invocation,
      error: null,
    })
  }
  return timeline
}

/** What to say of a job id that is nowhere (inspect.job() answered null). */
export function missingJob(id: string): string {
  return `No job ${id}: it is not waiting, running, archived or a dead letter. It was never enqueued, was cancelled, or finished longer ago than maintenance keeps the archive (archiveRetentionMs, 7 days by default).`
}
