import { expect, test } from 'vitest'
import { resolveConfig } from '../../src/config.js'

const resolve = (options: Parameters<typeof resolveConfig>[0]) => () =>
  resolveConfig({ database: 'pglite:memory', env: {}, ...options })

test('the top-level circuitBreaker takes the same bounds as a queue circuitBreaker', () => {
  for (const breaker of [{ threshold: 5000 }, { baseMs: 86_400_001 }, { capMs: 7 * 86_400_000 + 1 }]) {
    expect(resolve({ queues: { q: { circuitBreaker: breaker } } })).toThrow(/queues\.q\.circuitBreaker/)
    expect(resolve({ circuitBreaker: breaker })).toThrow(/circuitBreaker\.(threshold|baseMs|capMs)/)
  }
  expect(resolve({ circuitBreaker: { threshold: 1000, baseMs: 86_400_000 } })).not.toThrow()
  expect(resolve({ circuitBreaker: false })).not.toThrow()
})
