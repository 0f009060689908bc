import { describe, expect, test } from 'vitest'
import { ReplayGuard } from '../../src/http/replay.js'

describe('ReplayGuard', () => {
  test('accepts a key once until it expires', () => {
    const guard = new ReplayGuard(10)
    expect(guard.use('a', 1_000, 0)).toBe(true)
    expect(guard.use('a', 1_000, 500)).toBe(false)
    expect(guard.use('a', 1_000, 1_000)).toBe(false)
    // Past its expiry the timestamp window rejects the request anyway; the slot is reusable.
    expect(guard.use('a', 3_000, 1_001)).toBe(true)
  })

  test('stays within its capacity, dropping expired entries before live ones', () => {
    const guard = new ReplayGuard(3)
    guard.use('old', 100, 0)
    guard.use('live1', 10_000, 0)
    guard.use('live2', 10_000, 0)
    expect(guard.use('new', 10_000, 200)).toBe(true)
    expect(guard.size).toBe(3)
    expect(guard.use('live1', 10_000, 300)).toBe(false)
    expect(guard.use('live2', 10_000, 300)).toBe(false)
  })

  test('when full of live entries, forgets the oldest accepted', () => {
    const guard = new ReplayGuard(2)
    guard.use('a', 10_000, 0)
    guard.use('b', 10_000, 0)
    guard.use('c', 10_000, 0)
    expect(guard.size).toBe(2)
    expect(guard.use('b', 10_000, 1)).toBe(false)
    expect(guard.use('c', 10_000, 1)).toBe(false)
    expect(guard.use('a', 10_000, 1)).toBe(true)
  })
})
