import { describe, expect, test } from 'vitest'
import { MAX_RESULT_BYTES, NonDeterminismError, ResultTooLargeError } from '../../src/index.js'
import { durationMs, storedResult } from '../../src/steps/values.js'

describe('step inputs', () => {
  test('durations: milliseconds or a number with a unit, up to 10 years; anything else is a clear error', () => {
    expect(durationMs(1500, 'duration')).toBe(1500)
    expect(durationMs('500ms', 'duration')).toBe(500)
    expect(durationMs('30s', 'duration')).toBe(30_000)
    expect(durationMs('1.5m', 'duration')).toBe(90_000)
    expect(durationMs('2h', 'duration')).toBe(7_200_000)
    expect(durationMs('7d', 'duration')).toBe(604_800_000)
    for (const bad of [
      -1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      '1y',
      '',
      'soon',
      '5 minutes',
      null,
      {},
      '11000d',
    ]) {
      expect(() => durationMs(bad, 'timeout'), String(bad)).toThrow(/Invalid timeout: .*use milliseconds/)
    }
    // Shown as given: NaN is not printed as null.
    expect(() => durationMs(Number.NaN, 'duration')).toThrow(/^Invalid duration: NaN;/)
    expect(() => durationMs(undefined, 'timeout')).toThrow(/^Missing timeout: it is required;/)
  })

  test('results: stored as JSON, undefined as null; unstorable or too large values are refused', () => {
    expect(storedResult(undefined, 'x')).toBe('null')
    expect(storedResult({ at: new Date(0), n: 1 }, 'x')).toBe('{"at":"1970-01-01T00:00:00.000Z","n":1}')
    expect(() => storedResult({ bad: 'a\u0000b' }, 'step "s"')).toThrow(/NUL/)
    expect(() => storedResult(1n, 'step "s"')).toThrow(/bigint/)
    const big = 'x'.repeat(MAX_RESULT_BYTES)
    expect(() => storedResult(big, 'step "s"')).toThrow(ResultTooLargeError)
    expect(() => storedResult(big, 'step "s"')).toThrow(/The result of step "s" is 262146 bytes of JSON/)
  })

  test('a NonDeterminismError names the step, its position and the step recorded there', () => {
    const error = new NonDeterminismError('charge', 3, { name: 'refund', kind: 'run' })
    expect(error.code).toBe('NON_DETERMINISM')
    expect(error.message).toMatch(
      /^Step "charge" was called at position 3, where this job's recorded run called run step "refund"/,
    )
  })
})
