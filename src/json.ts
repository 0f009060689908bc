import { type Issue, ValidationError } from './errors.js'

/** The deepest nesting of arrays and objects a stored value may have (as Ruby's JSON default). */
export const MAX_JSON_DEPTH = 100

/** What is wrong with a value, and where: `path` leads from the value's root to the culprit. */
export interface JsonProblem {
  path: (string | number)[]
  message: string
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it looks for.
const SUSPECT = /[\u0000\ud800-\udfff]/
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

function stringProblem(value: string, what: string): string | null {
  if (!SUSPECT.test(value)) return null
  if (value.includes('\u0000'))
    return `${what}contains a NUL character (\\u0000), which PostgreSQL cannot store`
  if (LONE_SURROGATE.test(value))
    return `${what}contains a lone UTF-16 surrogate (half a character), which is not valid Unicode`
  return null
}

const found = (message: string, path: (string | number)[] = []): JsonProblem => ({ path, message })

function walk(value: unknown, depth: number, maxDepth: number, key: string | number): JsonProblem | null {
  if (typeof value === 'string') {
    const message = stringProblem(value, '')
    return message === null ? null : found(message)
  }
  if (typeof value === 'number')
    return Number.isFinite(value) ? null : found(`is ${value}: JSON numbers are finite`)
  if (typeof value !== 'object') {
    return typeof value === 'boolean' || value === undefined
      ? null
      : found(`is a ${typeof value}, which JSON has no form for`)
  }
  if (value === null) return null
  if (Array.isArray(value)) return walkArray(value, depth, maxDepth)
  // As JSON.stringify does: a value with toJSON (a Date) is stored as what toJSON returns.
  const toJSON = (value as { toJSON?: unknown }).toJSON
  if (typeof toJSON === 'function') {
    const json: unknown = toJSON.call(value, String(key))
    if (typeof json !== 'object' || json === null) return walk(json, depth, maxDepth, key)
    return Array.isArray(json) ? walkArray(json, depth, maxDepth) : walkObject(json, depth, maxDepth)
  }
  return walkObject(value, depth, maxDepth)
}

const tooDeep = (maxDepth: number): JsonProblem =>
  found(`nests deeper than ${maxDepth} levels of arrays and objects`)

function walkArray(value: readonly unknown[], depth: number, maxDepth: number): JsonProblem | null {
  if (depth >= maxDepth) return tooDeep(maxDepth)
  for (let i = 0; i < value.length; i++) {
    const problem = walk(value[i], depth + 1, maxDepth, i)
    if (problem) {
      problem.path.unshift(i)
      return problem
    }
  }
  return null
}

function walkObject(value: object, depth: number, maxDepth: number): JsonProblem | null {
  if (depth >= maxDepth) return tooDeep(maxDepth)
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record)) {
    const message = stringProblem(key, 'the key ')
    if (message !== null) return found(message, [key])
    const problem = walk(record[key], depth + 1, maxDepth, key)
    if (problem) {
      problem.path.unshift(key)
      return problem
    }
  }
  return null
}

/**
 * The first thing in `value` that cannot be stored as PostgreSQL `jsonb`, or null: a NUL
 * character or a lone surrogate in a string or key, nesting deeper than `maxDepth`, a number
 * JSON has no form for (NaN, ±Infinity), a bigint, symbol or function. One depth-first walk,
 * never deeper than `maxDepth`, so a hostile value can neither crash it nor reach the database.
 */
export function jsonProblem(value: unknown, maxDepth: number = MAX_JSON_DEPTH): JsonProblem | null {
  return walk(value, 0, maxDepth, '')
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** A path as a JavaScript accessor from `root`: `input.a.b[3]`, `payload["odd key"]`. */
export function jsonPath(root: string, path: readonly (string | number)[]): string {
  let out = root
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else if (IDENTIFIER.test(part)) out += out === '' ? part : `.${part}`
    else out += `[${JSON.stringify(part.length > 40 ? `${part.slice(0, 40)}…` : part)}]`
  }
  return out
}

/**
 * The first issue of a failed parse of something a developer wrote (a job, contract,
 * subscriber or recurring task definition, Sluice's options), as the error message says it:
 * `at retry.maxAttempts: Too small: expected number to be >=1`, or `: message` at the root.
 */
export function firstIssue(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const first = issues[0]
  if (!first) return ': invalid'
  const path = jsonPath(
    '',
    first.path.map((part) => (typeof part === 'number' ? part : String(part))),
  )
  return `${path ? ` at ${path}` : ''}: ${first.message}`
}

/**
 * Throws a ValidationError (400, INVALID_INPUT) when `value` cannot be stored (see jsonProblem).
 * The message names the culprit by its path from `root` (`input.a.b[3]`) after `context`; the
 * issue's path is `prefix` followed by the path inside the value.
 */
export function assertStorable(
  value: unknown,
  root: string,
  context: string,
  prefix: readonly (string | number)[] = [],
): void {
  const problem = jsonProblem(value)
  if (!problem) return
  const issue: Issue = { path: [...prefix, ...problem.path], message: problem.message, code: 'unstorable' }
  throw new ValidationError(
    `${context} at ${jsonPath(root, problem.path) || '(root)'}: ${problem.message}.`,
    [issue],
  )
}
