import type { Statement } from '../db/types.js'

/** How the log-in slows down a client's repeated attempts. */
export interface LoginThrottle {
  /** Attempts a client may make in a row, right after each other: the next one waits `baseDelayMs`. */
  freeAttempts: number
  /** The delay after the last free attempt, ms; it doubles with each further one. */
  baseDelayMs: number
  /** The longest delay, ms: no client waits longer than this after its last attempt. */
  maxDelayMs: number
}

/** What a log-in attempt may do: go ahead, or wait `waitMs` more. */
export interface LoginGateRow {
  admitted: boolean
  waitMs: number
}

/**
 * Takes a log-in attempt for `client`, in one statement: admitted when the client's delay has
 * run out, and then counted as if it failed (the delay before the next attempt set), so that
 * concurrent attempts of one client are serialised by its row and each waits its turn; a right
 * secret then deletes the row (loginSucceeded). A refused attempt changes nothing. Rows idle for
 * a day are deleted on the way, a few at a time.
 */
export function takeLoginAttempt(t: string, client: string, throttle: LoginThrottle): Statement {
  const delay = (attempts: string) =>
    `CASE WHEN ${attempts} < $2 THEN 0 ELSE least($4::float8, $3::float8 * 2 ^ least(${attempts} - greatest($2, 1), 40)) END`
  return {
    text: `WITH idle AS (
  DELETE FROM ${t}.login_attempts WHERE client IN (
    SELECT client FROM ${t}.login_attempts
    WHERE last_attempt_at < now() - interval '1 day' AND client <> $1 LIMIT 10)
)
INSERT INTO ${t}.login_attempts AS l (client, attempts, last_attempt_at, blocked_until)
VALUES ($1, 1, now(), now() + (${delay('1')}) * interval '1 millisecond')
ON CONFLICT (client) DO UPDATE SET
  attempts = CASE WHEN l.blocked_until <= now() THEN l.attempts + 1 ELSE l.attempts END,
  last_attempt_at = CASE WHEN l.blocked_until <= now() THEN now() ELSE l.last_attempt_at END,
  blocked_until = CASE WHEN l.blocked_until <= now()
                       THEN now() + (${delay('l.attempts + 1')}) * interval '1 millisecond'
                       ELSE l.blocked_until END
RETURNING l.last_attempt_at = now() AS admitted,
  CASE WHEN l.last_attempt_at = now() THEN 0
       ELSE ceil(extract(epoch FROM l.blocked_until - now()) * 1000) END::float8 AS "waitMs"`,
    values: [client, throttle.freeAttempts, throttle.baseDelayMs, throttle.maxDelayMs],
  }
}

/** The right secret: the client's attempts are forgotten. */
export function loginSucceeded(t: string, client: string): Statement {
  return { text: `DELETE FROM ${t}.login_attempts WHERE client = $1`, values: [client] }
}

/**
 * Ends a session until it would have expired (`expiresAt`), deleting a few sessions that have
 * expired since on the way.
 */
export function endSession(t: string, session: string, expiresAt: Date): Statement {
  return {
    text: `WITH expired AS (
  DELETE FROM ${t}.ended_sessions WHERE session IN (
    SELECT session FROM ${t}.ended_sessions WHERE expires_at < now() AND session <> $1 LIMIT 100)
)
INSERT INTO ${t}.ended_sessions (session, expires_at) VALUES ($1, $2) ON CONFLICT (session) DO NOTHING`,
    values: [session, expiresAt],
  }
}

/** Whether a session was ended by a logout. */
export function sessionEnded(t: string, session: string): Statement {
  return {
    text: `SELECT EXISTS (SELECT 1 FROM ${t}.ended_sessions WHERE session = $1) AS ended`,
    values: [session],
  }
}
