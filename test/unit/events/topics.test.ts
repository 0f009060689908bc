import { describe, expect, it } from 'vitest'
import {
  assertPattern,
  assertTopic,
  MAX_TOPIC_LENGTH,
  MAX_TOPIC_WORDS,
  patternRegex,
  wordsMatch,
} from '../../../src/events/topics.js'
import { ValidationError } from '../../../src/index.js'

describe('topic and pattern checks', () => {
  it('returns a valid topic or pattern as given', () => {
    expect(assertTopic('orders.created')).toBe('orders.created')
    expect(assertPattern('orders.*.#')).toBe('orders.*.#')
  })

  it('refuses with INVALID_NAME, naming the kind and the rule', () => {
    expect(() => assertTopic('orders.*')).toThrow(ValidationError)
    expect(() => assertTopic('orders.*')).toThrow(/^Invalid topic "orders\.\*": .*no wildcards/)
    expect(() => assertPattern('orders.a*')).toThrow(
      /^Invalid pattern "orders\.a\*": has an invalid word "a\*"/,
    )
    expect(() => assertTopic(7)).toThrow(/^Invalid topic number: must be a string/)
    const error = (() => {
      try {
        assertPattern('')
      } catch (e) {
        return e
      }
    })()
    expect(error).toMatchObject({
      code: 'INVALID_NAME',
      issues: [{ path: ['pattern'], message: 'must not be empty' }],
    })
  })

  it('holds topics to their length and word limits, exactly', () => {
    const words = (n: number) => Array(n).fill('a').join('.')
    expect(assertTopic(words(MAX_TOPIC_WORDS))).toBeTruthy()
    expect(() => assertTopic(words(MAX_TOPIC_WORDS + 1))).toThrow(/at most 32 words/)
    expect(assertTopic('a'.repeat(MAX_TOPIC_LENGTH))).toBeTruthy()
    expect(() => assertTopic('a'.repeat(MAX_TOPIC_LENGTH + 1))).toThrow(/at most 255 characters/)
  })
})

describe('patternRegex', () => {
  it('maps words, "*" and "#" to an anchored expression over "." + topic', () => {
    expect(patternRegex('a.*.#')).toBe('^\\.a\\.[^.]+(?:\\.[^.]+)*$')
    expect(() => patternRegex('a..b')).toThrow(ValidationError)
  })
})

describe('wordsMatch', () => {
  const m = (pattern: string, topic: string) => wordsMatch(pattern.split('.'), topic.split('.'))

  it('matches "*" to exactly one word and "#" to any number, none included', () => {
    expect(m('a.*', 'a.b')).toBe(true)
    expect(m('a.*', 'a')).toBe(false)
    expect(m('a.*', 'a.b.c')).toBe(false)
    expect(m('a.#', 'a')).toBe(true)
    expect(m('a.#', 'a.b.c')).toBe(true)
    expect(m('#.c', 'c')).toBe(true)
    expect(m('#', 'x.y')).toBe(true)
    expect(m('a.#.c.#.e', 'a.c.e')).toBe(true)
    expect(m('a.#.c.#.e', 'a.b.e')).toBe(false)
  })

  it('takes linear steps on a pattern that makes backtracking engines explode', () => {
    const pattern = Array(16).fill('#').concat('z').join('.')
    const topic = Array(32).fill('a').join('.')
    expect(m(pattern, topic)).toBe(false)
  })
})
