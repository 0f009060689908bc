/**
 * What a step is given and gives back, checked: durations (sleeps, timeouts), step names, and
 * results as they are stored.
 */
import { ValidationError } from '../errors.js'
import { assertStorable } from '../json.js'
import { MAX_RESULT_BYTES, ResultTooLargeError } from './errors.js'

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/
/** The longest sleep or wait: about 10 years, as for a job's run time. */
const MAX_DURATION_MS = 10 * 365 * 86_400_000

/** A duration in ms, from ms or a number with a unit ("30s"); a clear error otherwise. */
export function durationMs(value: unknown, what: string): number {
  let ms: number | undefined
  if (typeof value === 'number') ms = value
  else if (typeof value === 'string') {
    const m = DURATION.exec(value.trim())
    if (m) ms = Number(m[1]) * UNITS[m[2]!]!
  }
  if (value === undefined) {
    throw new ValidationError(
      `Missing ${what}: it is required; use milliseconds or a number with ms, s, m, h or d ("30s"), up to 10 years`,
      [{ path: [what], message: 'is required' }],
    )
  }
  if (ms === undefined || !Number.isFinite(ms) || ms < 0 || ms > MAX_DURATION_MS) {
    // String(), not JSON: NaN and Infinity shown as they are, not as null.
    const shown = typeof value === 'string' ? JSON.stringify(value) : String(value)
    throw new ValidationError(
      `Invalid ${what}: ${shown}; use milliseconds or a number with ms, s, m, h or d ("30s"), up to 10 years`,
      [{ path: [what], message: 'must be a duration' }],
    )
  }
  return Math.round(ms)
}

const encoder = new TextEncoder()

/** A result as stored: JSON text (undefined is stored as null), within MAX_RESULT_BYTES. */
export function storedResult(value: unknown, what: string): string {
  assertStorable(value, 'result', `The result of ${what}`)
  const json = JSON.stringify(value ?? null) ?? 'null'
  if (json.length * 3 > MAX_RESULT_BYTES) {
    const bytes = encoder.encode(json).length
    if (bytes > MAX_RESULT_BYTES) throw new ResultTooLargeError(what, bytes)
  }
  return json
}

export function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
    throw new ValidationError('A step name must be a string of 1-200 characters', [
      { path: ['name'], message: 'must be a string of 1-200 characters' },
    ])
  }
  return name
}
