import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import { DRAIN_DEFAULTS, resolveConfig } from '../../src/config.js'
import { ConfigError, defineJob, type SluiceOptions } from '../../src/index.js'

const URL = 'postgres://from-option/db'
const noop = defineJob({ name: 'noop', queue: 'work', input: z.object({}), run: async () => {} })

/** The ConfigError `resolveConfig(options)` throws. */
function refusal(options: SluiceOptions): ConfigError {
  try {
    resolveConfig(options)
  } catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
  throw new Error('resolveConfig accepted the options')
}

describe('resolveConfig: precedence', () => {
  const env = { DATABASE_URL: 'postgres://from-env/db', SLUICE_SCHEMA: 'env_schema' }

  it('takes an explicit option over the environment', () => {
    const config = resolveConfig({ database: URL, schema: 'opt_schema', env })
    expect(config.database).toBe(URL)
    expect(config.schema).toBe('opt_schema')
  })

  it('takes the environment over the defaults', () => {
    const config = resolveConfig({ env })
    expect(config.database).toBe('postgres://from-env/db')
    expect(config.schema).toBe('env_schema')
  })

  it('falls back to the defaults', () => {
    const config = resolveConfig({ database: URL, env: {} })
    expect(config.schema).toBe('sluice')
    expect(config.maxPayloadBytes).toBe(256 * 1024)
    expect(config.drain).toEqual(DRAIN_DEFAULTS)
    expect(config.wake.url).toBeUndefined()
    expect(config.wake.onEnqueue).toBe(false)
  })

  it('merges partial drain options over the defaults', () => {
    const config = resolveConfig({ database: URL, env: {}, drain: { concurrency: 3 } })
    expect(config.drain).toEqual({ ...DRAIN_DEFAULTS, concurrency: 3 })
  })

  it('reads wake-up settings from the environment, first secret of a rotation list', () => {
    const config = resolveConfig({
      database: URL,
      env: {
        SLUICE_DRAIN_URL: 'https://example.com/drain',
        SLUICE_SECRET: ' new-secret-0123456789 , old-secret-0123456789',
      },
    })
    expect(config.wake).toMatchObject({
      url: 'https://example.com/drain',
      secret: 'new-secret-0123456789',
      onEnqueue: true,
    })
    const explicit = resolveConfig({
      database: URL,
      env: { SLUICE_DRAIN_URL: 'https://example.com/drain' },
      wake: { url: 'https://other.example/drain', onEnqueue: false },
    })
    expect(explicit.wake).toMatchObject({ url: 'https://other.example/drain', onEnqueue: false })
  })

  it('is frozen', () => {
    const config = resolveConfig({ database: URL, env: {} })
    expect(Object.isFrozen(config)).toBe(true)
    expect(Object.isFrozen(config.drain)).toBe(true)
  })

  it("knows the jobs' queues", () => {
    const config = resolveConfig({ database: URL, env: {}, jobs: [noop] })
    expect(config.jobs.get('noop')).toBe(noop)
    expect(config.queues).toEqual(['work'])
    expect(config.queueSettings.map((q) => q.name)).toEqual(['work'])
  })
})

describe('resolveConfig: refusals', () => {
  it('names the field of an invalid option', () => {
    const error = refusal({ database: URL, env: {}, drain: { concurrency: 0 } })
    expect(error.code).toBe('INVALID_CONFIG')
    expect(error.message).toMatch(/^Invalid Sluice options at drain\.concurrency: /)
    expect(error.issues?.[0]?.path).toEqual(['drain', 'concurrency'])
  })

  it.each<[string, SluiceOptions, RegExp]>([
    [
      'an unknown option',
      { database: URL, env: {}, colour: 'blue' } as SluiceOptions,
      /Invalid Sluice options/,
    ],
    ['an unknown drain option', { database: URL, env: {}, drain: { budget: 1 } } as never, /drain/],
    ['a schema name that is not an identifier', { database: URL, env: {}, schema: 'Bad-Name' }, /schema/],
    ['a payload limit of zero', { database: URL, env: {}, maxPayloadBytes: 0 }, /maxPayloadBytes/],
    ['an empty database URL', { database: '', env: {} }, /database/],
    ['a job not made by defineJob', { database: URL, env: {}, jobs: [{ name: 'x' }] as never }, /defineJob/],
    ['two jobs with one name', { database: URL, env: {}, jobs: [noop, noop] }, /Two jobs are named "noop"/],
    [
      'a wake URL that is not a URL',
      { database: URL, env: { SLUICE_DRAIN_URL: 'not a url' } },
      /SLUICE_DRAIN_URL/,
    ],
    ['a short wake secret', { database: URL, env: {}, wake: { secret: 'short' } }, /Invalid wake options/],
  ])('refuses %s', (_, options, message) => {
    expect(refusal(options).message).toMatch(message)
  })

  it('blames the environment for a bad SLUICE_SCHEMA', () => {
    const error = refusal({ database: URL, env: { SLUICE_SCHEMA: 'pg_catalog' } })
    expect(error.message).toMatch(/environment variable SLUICE_SCHEMA/)
    expect(error.issues?.[0]?.path).toEqual(['env', 'SLUICE_SCHEMA'])
  })

  it('does not read the environment for an option it was given', () => {
    expect(
      resolveConfig({ database: URL, schema: 'ok_schema', env: { SLUICE_SCHEMA: 'Bad Name' } }).schema,
    ).toBe('ok_schema')
  })
})
