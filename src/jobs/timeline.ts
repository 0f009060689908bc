/**
 * A job's attempts, read from what the database keeps of them: each failed attempt's entry in the
 * job's error history (stamped when its settle ran, with its number, how long it ran and the
 * drain invocation that ran it) and, for a running job, the invocation holding its lease.
 */

/** One attempt of a job, newest last. */
export interface JobAttempt {
  attempt: number
  outcome: 'running' | 'failed'
  /** The end minus the duration; null when the duration was not recorded (entries of older versions). */
  startedAt: string | null
  /** When its settle recorded the failure; null while it runs. */
  endedAt: string | null
  durationMs: number | null
  /** The drain invocation that ran it (`invocations` while it runs). */
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

/**
 * The attempts of a job whose error history is `errors` (the last ten failures), which has made
 * `attempts` attempts and, when `runningIn` is set, runs now in that invocation.
 */
export function attemptsTimeline(
  errors: readonly unknown[],
  attempts: number,
  runningIn: string | null,
): JobAttempt[] {
  const timeline = errors
    .filter((e): e is ErrorEntry => typeof e === 'object' && e !== null)
    .map((e, i) => failed(e, i))
  if (runningIn !== null)
    timeline.push({
      attempt: attempts,
      outcome: 'running',
      startedAt: null,
      endedAt: null,
      durationMs: null,
      invocation: runningIn,
      error: null,
    })
  return timeline
}
