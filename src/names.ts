import * as z from 'zod/mini'
import { ValidationError } from './errors.js'

/** Job, queue and subscriber names: a letter or digit, then letters, digits, `_`, `-`, `.` or `:`. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/

/** Schema names are spliced into SQL as identifiers, so they are held to a stricter pattern. */
export const SCHEMA_PATTERN = /^(?!pg_)[a-z_][a-z0-9_]{0,62}$/

export const nameSchema = z.lazy(() =>
  z
    .string()
    .check(
      z.regex(
        NAME_PATTERN,
        'must be 1-128 characters: letters, digits, "_", "-", "." or ":", starting with a letter or digit',
      ),
    ),
)

export const schemaNameSchema = z.lazy(() =>
  z
    .string()
    .check(
      z.regex(
        SCHEMA_PATTERN,
        'must be 1-63 characters: lowercase letters, digits or "_", not starting with a digit or "pg_"',
      ),
    ),
)

export function assertName(kind: 'job' | 'queue' | 'subscriber' | 'topic', value: unknown): string {
  const parsed = nameSchema.safeParse(value)
  if (parsed.success) return parsed.data
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value
  throw new ValidationError(
    `Invalid ${kind} name ${shown}: ${parsed.error.issues[0]?.message}`,
    [{ path: [kind], message: parsed.error.issues[0]?.message ?? 'invalid' }],
    'INVALID_NAME',
  )
}

/** Quotes a validated schema name for use as an SQL identifier. */
export function quoteSchema(schema: string): string {
  if (!SCHEMA_PATTERN.test(schema))
    throw new ValidationError(`Invalid schema name ${JSON.stringify(schema)}`, [], 'INVALID_NAME')
  return `"${schema}"`
}

/** Edit distance between two names (insertions, deletions and substitutions). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = row[j]!
      row[j] = next
    }
  }
  return row[b.length]!
}

/** The closest of `known` to `typed`, when it is close enough to be a typo (for "Did you mean…"). */
export function closest(typed: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(typed.length / 3)) + 1
  for (const name of known) {
    const d = distance(typed.toLowerCase(), name.toLowerCase())
    if (d < bestDistance) {
      best = name
      bestDistance = d
    }
  }
  return best
}
