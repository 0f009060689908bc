import { describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/index.js'
import { assertName, NAME_PATTERN, quoteSchema, SCHEMA_PATTERN } from '../../src/names.js'

describe('names', () => {
  it.each(['a', 'Z9', 'send-email', 'orders.created', 'billing:v2', 'a_b', 'x'.repeat(128)])(
    'accepts %s',
    (name) => {
      expect(assertName('job', name)).toBe(name)
      expect(NAME_PATTERN.test(name)).toBe(true)
    },
  )

  it.each(['', '-lead', '.lead', 'has space', 'semi;colon', 'quote"', 'x'.repeat(129), 'é', 'a\nb'])(
    'refuses %j with INVALID_NAME, naming the kind',
    (name) => {
      const error = (() => {
        try {
          assertName('queue', name)
        } catch (e) {
          return e
        }
      })()
      expect(error).toBeInstanceOf(ValidationError)
      expect(error).toMatchObject({ code: 'INVALID_NAME', issues: [{ path: ['queue'] }] })
      expect((error as Error).message).toMatch(/^Invalid queue name /)
    },
  )

  it('refuses what is not a string and shows its type, not its value', () => {
    expect(() => assertName('job', 42)).toThrow(/^Invalid job name number:/)
    expect(() => assertName('topic', { toString: () => 'x' })).toThrow(/^Invalid topic name object:/)
  })

  it('shows at most 80 characters of a long name', () => {
    expect(() => assertName('job', `-${'y'.repeat(500)}`)).toThrow(new RegExp(`"-${'y'.repeat(79)}":`))
  })
})

describe('schema names', () => {
  it('quotes a valid schema name', () => {
    expect(quoteSchema('sluice')).toBe('"sluice"')
    expect(quoteSchema('_a1')).toBe('"_a1"')
    expect(quoteSchema('x'.repeat(63))).toBe(`"${'x'.repeat(63)}"`)
  })

  it.each(['', 'Sluice', '1abc', 'pg_temp', 'a-b', 'a"b', 'x'.repeat(64), 'a;drop'])(
    'refuses %j',
    (schema) => {
      expect(SCHEMA_PATTERN.test(schema)).toBe(false)
      expect(() => quoteSchema(schema)).toThrow(ValidationError)
    },
  )

  it('allows pg in the middle or a name merely starting with "pg"', () => {
    expect(quoteSchema('pgboss')).toBe('"pgboss"')
    expect(quoteSchema('my_pg_schema')).toBe('"my_pg_schema"')
  })
})
