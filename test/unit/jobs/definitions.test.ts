import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import {
  ConfigError,
  createSluice,
  defineContract,
  defineJob,
  defineRecurring,
  defineSubscriber,
} from '../../../src/index.js'

/** The ConfigError a definition throws. */
function refusal(define: () => unknown): ConfigError {
  try {
    define()
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error('the definition was accepted')
}

const input = z.object({ id: z.string() })
const run = () => {}

describe('an invalid definition names the field at fault', () => {
  it.each<[string, () => unknown, string, string[]]>([
    [
      'a job without an input schema',
      () => defineJob({ name: 'ping', run } as never),
      'Invalid job definition "ping" at input: must be a zod schema',
      ['input'],
    ],
    [
      "a job's retry limit below one",
      () => defineJob({ name: 'ping', input, run, retry: { maxAttempts: 0 } }),
      'Invalid job definition "ping" at retry.maxAttempts: ',
      ['retry', 'maxAttempts'],
    ],
    [
      "a contract's priority out of range",
      () => defineContract({ name: 'ping', input, priority: -1 }),
      'Invalid job contract "ping" at priority: ',
      ['priority'],
    ],
    [
      "a subscriber's topic pattern that is not a string",
      () => defineSubscriber({ name: 'audit', topic: 3, input, run } as never),
      'Invalid subscriber "audit" at topic: ',
      ['topic'],
    ],
    [
      "a recurring task's job that is not a string",
      () => defineRecurring({ name: 'nightly', cron: '0 3 * * *', job: 7 } as never),
      'Invalid recurring task "nightly" at job: ',
      ['job'],
    ],
    [
      "Sluice's options with a payload limit of zero",
      () => createSluice({ database: 'postgres://localhost/x', env: {}, maxPayloadBytes: 0 }),
      'Invalid Sluice options at maxPayloadBytes: ',
      ['maxPayloadBytes'],
    ],
  ])('%s', (_, define, message, path) => {
    const error = refusal(define)
    expect(error.message.startsWith(message)).toBe(true)
    expect(error.issues?.[0]?.path.map(String)).toEqual(path)
  })

  it('says a problem of the whole definition without a path', () => {
    expect(refusal(() => defineJob(null as never)).message).toMatch(/^Invalid job definition: /)
  })
})
