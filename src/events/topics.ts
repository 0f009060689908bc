import * as z from 'zod/mini'
import { ValidationError } from '../errors.js'

/** Longest topic or pattern, characters. */
export const MAX_TOPIC_LENGTH = 255
/** Most words in a topic or pattern. */
export const MAX_TOPIC_WORDS = 32

const WORD = /^[A-Za-z0-9_-]+$/
const WORD_RULE = 'letters, digits, "_" or "-"'

function check(value: string, wildcards: boolean): string | null {
  if (value.length === 0) return 'must not be empty'
  if (value.length > MAX_TOPIC_LENGTH) return `must be at most ${MAX_TOPIC_LENGTH} characters`
  const words = value.split('.')
  if (words.length > MAX_TOPIC_WORDS) return `must have at most ${MAX_TOPIC_WORDS} words`
  for (const word of words) {
    if (word === '') return 'must not have empty words (a leading, trailing or doubled ".")'
    if (wildcards && (word === '*' || word === '#')) continue
    if (!WORD.test(word)) {
      return wildcards
        ? `has an invalid word "${word.slice(0, 40)}": each word is "*", "#" or ${WORD_RULE}`
        : `has an invalid word "${word.slice(0, 40)}": each word is ${WORD_RULE} (no wildcards in a topic)`
    }
  }
  return null
}

/** Why `value` is not a valid topic (dot-separated words, no wildcards), or null when it is. */
export const topicProblem = (value: string): string | null => check(value, false)

/** Why `value` is not a valid subscription pattern (words, `*` or `#`), or null when it is. */
export const patternProblem = (value: string): string | null => check(value, true)

// Pure: bundles that only check topics with assertTopic (the edge one) leave both out.
export const topicSchema = /* @__PURE__ */ z.string().check(
  /* @__PURE__ */ z.superRefine((value, ctx) => {
    const problem = topicProblem(value)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  }),
)

export const patternSchema = /* @__PURE__ */ z.string().check(
  /* @__PURE__ */ z.superRefine((value, ctx) => {
    const problem = patternProblem(value)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  }),
)

function invalid(kind: 'topic' | 'pattern', value: unknown, problem: string): ValidationError {
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value
  return new ValidationError(
    `Invalid ${kind} ${shown}: ${problem}`,
    [{ path: [kind], message: problem }],
    'INVALID_NAME',
  )
}

/** The topic, or a ValidationError (INVALID_NAME) saying what is wrong with it. */
export function assertTopic(value: unknown): string {
  const problem = typeof value === 'string' ? topicProblem(value) : 'must be a string'
  if (problem) throw invalid('topic', value, problem)
  return value as string
}

/** The pattern, or a ValidationError (INVALID_NAME) saying what is wrong with it. */
export function assertPattern(value: unknown): string {
  const problem = typeof value === 'string' ? patternProblem(value) : 'must be a string'
  if (problem) throw invalid('pattern', value, problem)
  return value as string
}

/**
 * The regular expression the database matches `'.' || topic` against, for a valid pattern:
 * per word, a literal word is `\.word`, `*` is `\.[^.]+` (exactly one word) and `#` is
 * `(?:\.[^.]+)*` (zero or more words), anchored at both ends. Words hold no regex
 * metacharacters, so nothing needs escaping.
 */
export function patternRegex(pattern: string): string {
  const body = assertPattern(pattern)
    .split('.')
    .map((word) => (word === '*' ? '\\.[^.]+' : word === '#' ? '(?:\\.[^.]+)*' : `\\.${word}`))
    .join('')
  return `^${body}$`
}

/**
 * Whether the words of a topic match the words of a pattern: word by word, in O(pattern ×
 * topic) steps whatever the pattern (a backtracking regex engine can take exponential time on
 * patterns with several `#`; PostgreSQL's engine does not backtrack).
 */
export function wordsMatch(pattern: readonly string[], topic: readonly string[]): boolean {
  // reach[j]: the pattern words seen so far match the first j topic words.
  let reach = topic.map(() => false)
  reach.push(false)
  reach[0] = true
  for (const word of pattern) {
    const next = reach.map(() => false)
    if (word === '#') {
      let any = false
      for (let j = 0; j < reach.length; j++) {
        any ||= reach[j]!
        next[j] = any
      }
    } else {
      for (let j = 1; j < reach.length; j++)
        next[j] = reach[j - 1]! && (word === '*' || word === topic[j - 1])
    }
    reach = next
  }
  return reach[topic.length]!
}

/**
 * Whether `topic` matches `pattern`, in process. Gives the answer the database's
 * `'.' || topic ~ patternRegex(pattern)` gives (the tests hold the two to the same table).
 */
export function topicMatches(pattern: string, topic: string): boolean {
  return wordsMatch(assertPattern(pattern).split('.'), assertTopic(topic).split('.'))
}
