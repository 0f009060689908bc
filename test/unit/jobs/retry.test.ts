import { describe, expect, it } from 'vitest'
import {
  backoffDelay,
  DEFAULT_RETRY,
  type RetryPolicy,
  resolveControls,
  resolveRetry,
} from '../../../src/jobs/define.js'

const exact: RetryPolicy = { ...DEFAULT_RETRY, jitter: 0 }

describe('backoffDelay', () => {
  it('grows by the factor from the base delay, attempt 1 first', () => {
    expect([1, 2, 3, 4].map((attempt) => backoffDelay(exact, attempt))).toEqual([1_000, 2_000, 4_000, 8_000])
  })

  it('treats attempt 0 or below as the first', () => {
    expect(backoffDelay(exact, 0)).toBe(1_000)
    expect(backoffDelay(exact, -3)).toBe(1_000)
  })

  it('stops at the longest delay, even for huge attempt numbers', () => {
    expect(backoffDelay({ ...exact, maxDelayMs: 5_000 }, 4)).toBe(5_000)
    expect(backoffDelay(exact, 1_000)).toBe(DEFAULT_RETRY.maxDelayMs)
  })

  it('spreads each delay by ±jitter around it', () => {
    const policy = { ...DEFAULT_RETRY, jitter: 0.2 }
    expect(backoffDelay(policy, 2, () => 0)).toBe(1_600)
    expect(backoffDelay(policy, 2, () => 0.5)).toBe(2_000)
    expect(backoffDelay(policy, 2, () => 0.999_999)).toBe(2_400)
  })

  it('never goes below zero, even with full jitter', () => {
    expect(backoffDelay({ ...DEFAULT_RETRY, jitter: 1 }, 3, () => 0)).toBe(0)
  })

  it('is a whole number of milliseconds', () => {
    expect(Number.isInteger(backoffDelay({ ...exact, baseDelayMs: 3, factor: 1.5 }, 2))).toBe(true)
  })
})

describe('resolveRetry', () => {
  it('reads a number as the attempts, and fills a partial policy with the defaults', () => {
    expect(resolveRetry(3)).toEqual({ ...DEFAULT_RETRY, maxAttempts: 3 })
    expect(resolveRetry({ factor: 3 })).toEqual({ ...DEFAULT_RETRY, factor: 3 })
    expect(resolveRetry(undefined)).toEqual(DEFAULT_RETRY)
    expect(Object.isFrozen(resolveRetry(undefined))).toBe(true)
  })
})

describe('resolveControls', () => {
  it('fills concurrency and uniqueness defaults, and leaves absent controls absent', () => {
    const key = () => 'k'
    expect(resolveControls({})).toEqual({ concurrency: undefined, unique: undefined })
    expect(resolveControls({ concurrency: { key, limit: 2 } }).concurrency).toEqual({
      key,
      limit: 2,
      ttl: 15 * 60_000,
      onConflict: 'block',
    })
    expect(resolveControls({ unique: { key, strategy: 'while-executing' } }).unique).toEqual({
      key,
      strategy: 'while-executing',
      onConflict: 'reject',
      ttl: 86_400_000,
    })
  })
})
