import { type Span, trace } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../../src/config.js'
import { ConfigError, type SluiceOptions } from '../../../src/index.js'
import { describeStatement } from '../../../src/tracing/db.js'
import { MAX_QUERY_TEXT, Tracing } from '../../../src/tracing/otel.js'

describe('describeStatement', () => {
  it('names a statement by its operation and the first name in the schema; the text keeps its placeholders', () => {
    const insert = describeStatement('INSERT INTO "sluice".jobs (queue, name) VALUES ($1, $2)')
    expect(insert).toEqual({
      name: 'INSERT jobs',
      attributes: {
        'db.system': 'postgresql',
        'db.system.name': 'postgresql',
        'db.operation.name': 'INSERT',
        'db.query.summary': 'INSERT jobs',
        'db.query.text': 'INSERT INTO "sluice".jobs (queue, name) VALUES ($1, $2)',
      },
    })
    expect(describeStatement('SELECT c.*, s.name FROM "t_1".claim($1::text[]) c').name).toBe('SELECT claim')
  })

  it('gives no operation name for a statement that does not start with one', () => {
    const withWake = describeStatement('WITH pub AS (SELECT 1) SELECT * FROM pub')
    expect(withWake.name).toBe('WITH')
    expect(withWake.attributes['db.operation.name']).toBeUndefined()
    expect(describeStatement('  ').name).toBe('postgresql')
  })

  it(`cuts the text at ${MAX_QUERY_TEXT} characters`, () => {
    const text = `SELECT ${'x, '.repeat(2000)}1`
    expect(describeStatement(text).attributes['db.query.text']).toBe(text.slice(0, MAX_QUERY_TEXT))
  })
})

describe('trace context as jobs store it', () => {
  const tracing = new Tracing(undefined)
  const spanOf = (context: ReturnType<Tracing['parse']>): Span => trace.getSpan(context!)!

  it('reads traceparent and tracestate back as a remote parent, and writes them out the same', async () => {
    await tracing.ready()
    const stored = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 rojo=00f067aa,congo=t61rcWkgMzE'
    const context = tracing.parse(stored)
    expect(spanOf(context).spanContext()).toMatchObject({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
      isRemote: true,
    })
    expect(tracing.serialize(spanOf(context))).toBe(stored)
    // From request headers: the two apart.
    const fromHeaders = tracing.parse('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00', 'k=v')
    expect(tracing.serialize(spanOf(fromHeaders))).toBe(
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00 k=v',
    )
  })

  it('refuses what is not a valid traceparent', async () => {
    await tracing.ready()
    for (const bad of [
      null,
      '',
      'garbage',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4bf92f3577b34da6a3ce929d0e0e473z-00f067aa0ba902b7-01',
    ])
      expect(tracing.parse(bad), String(bad)).toBeUndefined()
    // An invalid span context serializes to nothing.
    const invalid = trace.wrapSpanContext({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 })
    expect(tracing.serialize(invalid)).toBeUndefined()
  })

  it('`tracing: false` never imports the API', async () => {
    const off = new Tracing(false)
    await off.ready()
    expect(off.api).toBeUndefined()
    expect(off.tracer()).toBeUndefined()
  })
})

describe('the tracing option', () => {
  const base = { database: 'postgres://x/db' }
  const refused = (tracing: unknown): string => {
    try {
      resolveConfig({ ...base, tracing } as SluiceOptions)
    } catch (error) {
      if (error instanceof ConfigError) return error.message
      throw error
    }
    return 'accepted'
  }

  it('takes false, a provider, and statements on or off', () => {
    const tracerProvider = { getTracer: () => ({}) }
    expect(resolveConfig({ ...base, tracing: false }).tracing).toBe(false)
    expect(resolveConfig({ ...base, tracing: { tracerProvider, statements: false } }).tracing).toEqual({
      tracerProvider,
      statements: false,
    })
  })

  it('refuses anything else, naming the field', () => {
    expect(refused(true)).toMatch(/tracing/)
    expect(refused({ tracerProvider: {} })).toMatch(/at tracing\.tracerProvider: must be a TracerProvider/)
    expect(refused({ statements: 'no' })).toMatch(/tracing\.statements/)
    expect(refused({ other: 1 })).toMatch(/tracing/)
  })
})
