import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, defineJob, defineSubscriber, type EventInfo } from '../../src/index.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, postJson } from '../helpers/http.js'

// A global tracer provider (as the OpenTelemetry SDK registers one) exporting to memory, with the
// AsyncLocalStorage context manager: what an application that traces has.

const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const contextManager = new AsyncLocalStorageContextManager()

beforeAll(() => {
  contextManager.enable()
  context.setGlobalContextManager(contextManager)
  trace.setGlobalTracerProvider(provider)
})
afterAll(async () => {
  trace.disable()
  context.disable()
  await provider.shutdown()
})

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})
beforeEach(() => exporter.reset())

/** An upstream caller's trace: the request arrives with this `traceparent`. */
const UPSTREAM_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const UPSTREAM_SPAN = '00f067aa0ba902b7'
const TRACEPARENT = `00-${UPSTREAM_TRACE}-${UPSTREAM_SPAN}-01`

const spans = (): ReadableSpan[] => exporter.getFinishedSpans()
const named = (name: string): ReadableSpan[] => spans().filter((s) => s.name === name)
function one(name: string): ReadableSpan {
  const found = named(name)
  expect(
    found.map((s) => s.name),
    `spans named "${name}"`,
  ).toEqual([name])
  return found[0]!
}
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId
const idOf = (span: ReadableSpan): string => span.spanContext().spanId
const traceOf = (span: ReadableSpan): string => span.spanContext().traceId
/** Statement spans whose parent is `span`. */
const statementsUnder = (span: ReadableSpan): ReadableSpan[] =>
  spans().filter((s) => s.attributes['db.system'] === 'postgresql' && parentOf(s) === idOf(span))

/** What a handler saw of the trace it ran in. */
const handlerSaw: { traceId: string; spanId: string }[] = []
const greet = defineJob({
  name: 'greet',
  input: z.object({ who: z.string() }),
  run: async () => {
    const active = trace.getActiveSpan()!.spanContext()
    handlerSaw.push({ traceId: active.traceId, spanId: active.spanId })
    // The handler's own span is a child of its run's span.
    await trace.getTracer('app').startActiveSpan('greeting', async (span: Span) => span.end())
  },
})

test('HTTP enqueue with a traceparent, drain, handler: one trace from the request to the handler', async () => {
  handlerSaw.length = 0
  env = await makeSluice({ jobs: [greet] })
  const app = appFor(env)
  const res = await postJson(
    app,
    '/jobs/greet',
    { input: { who: 'ada' } },
    {
      Authorization: 'Bearer sk_current_2f6b1c8e9a0d4e7f',
      traceparent: TRACEPARENT,
      tracestate: 'rojo=00f067aa',
    },
  )
  expect(res.status).toBe(202)
  const { id } = (await res.json()) as { id: string }

  // The request's server span continues the caller's trace; the enqueue is inside it.
  const server = one('POST /jobs/:name')
  expect(server.kind).toBe(SpanKind.SERVER)
  expect(traceOf(server)).toBe(UPSTREAM_TRACE)
  expect(parentOf(server)).toBe(UPSTREAM_SPAN)
  expect(server.attributes['http.response.status_code']).toBe(202)
  expect(server.attributes['http.route']).toBe('/jobs/:name')
  const enqueue = one('sluice enqueue greet')
  expect(enqueue.kind).toBe(SpanKind.PRODUCER)
  expect(parentOf(enqueue)).toBe(idOf(server))
  expect(enqueue.attributes).toMatchObject({
    'sluice.job.name': 'greet',
    'sluice.queue': 'default',
    'sluice.job.id': id,
    'sluice.enqueue.status': 'enqueued',
  })
  // Its statement: database conventions, the text with placeholders and never the values.
  const [insert, ...more] = statementsUnder(enqueue)
  expect(more).toEqual([])
  expect(insert!.kind).toBe(SpanKind.CLIENT)
  expect(insert!.name).toBe('INSERT jobs')
  expect(insert!.attributes).toMatchObject({
    'db.system': 'postgresql',
    'db.system.name': 'postgresql',
    'db.operation.name': 'INSERT',
    'db.response.returned_rows': 1,
  })
  const text = String(insert!.attributes['db.query.text'])
  expect(text).toContain('$3::jsonb')
  expect(text).not.toContain('ada')
  expect(Object.values(insert!.attributes).some((v) => String(v).includes('ada'))).toBe(false)

  // The job stores the enqueue span's context, with the caller's tracestate.
  const [row] = await env.sql<{ trace_context: string }>(
    'SELECT trace_context FROM $schema.jobs WHERE id = $1',
    [id],
  )
  expect(row!.trace_context).toBe(`00-${UPSTREAM_TRACE}-${idOf(enqueue)}-01 rojo=00f067aa`)

  exporter.reset()
  const summary = await env.sluice.drain({ queues: ['default'] })
  expect(summary).toMatchObject({ claimed: 1, completed: 1, failed: 0 })

  const drain = one('sluice drain')
  expect(parentOf(drain)).toBeUndefined()
  expect(drain.attributes).toMatchObject({
    'sluice.drain.queues': ['default'],
    'sluice.drain.claimed': 1,
    'sluice.drain.completed': 1,
    'sluice.drain.failed': 0,
    'sluice.drain.stopped_by': summary.stoppedBy,
    'sluice.drain.invocation_id': summary.invocationId,
  })
  // The run continues the request's trace: a child of the enqueue, linked to the drain.
  const run = one('sluice run greet')
  expect(run.kind).toBe(SpanKind.CONSUMER)
  expect(traceOf(run)).toBe(UPSTREAM_TRACE)
  expect(parentOf(run)).toBe(idOf(enqueue))
  expect(run.spanContext().traceState?.get('rojo')).toBe('00f067aa')
  expect(run.links.map((l) => l.context.spanId)).toEqual([idOf(drain)])
  expect(run.attributes).toMatchObject({
    'sluice.job.id': id,
    'sluice.job.name': 'greet',
    'sluice.queue': 'default',
    'sluice.job.attempt': 1,
    'sluice.job.outcome': 'completed',
  })
  expect(run.attributes['sluice.job.queue_wait_ms']).toBeGreaterThanOrEqual(0)
  expect(run.status.code).toBe(SpanStatusCode.UNSET)
  // The handler ran inside the run's span, and its own span is the run's child.
  expect(handlerSaw).toEqual([{ traceId: UPSTREAM_TRACE, spanId: idOf(run) }])
  expect(parentOf(one('greeting'))).toBe(idOf(run))
  // The drain's statements (claim, settle) are the drain's children.
  const statements = statementsUnder(drain)
  expect(statements.length).toBeGreaterThanOrEqual(2)
  expect(statements.map((s) => String(s.attributes['db.query.text'])).join('\n')).toMatch(/claim\(/)
})

test('a failed run records its error on its span; the drain counts it', async () => {
  const boom = defineJob({
    name: 'boom',
    input: z.object({}),
    retry: 3,
    run: () => {
      throw new TypeError('the handler broke')
    },
  })
  env = await makeSluice({ jobs: [boom] })
  const enqueued = await trace.getTracer('app').startActiveSpan('caller', async (span: Span) => {
    try {
      return await env!.sluice.enqueue(boom, {})
    } finally {
      span.end()
    }
  })
  const caller = one('caller')
  await env.sluice.drain({ queues: ['default'] })
  const run = one('sluice run boom')
  expect(traceOf(run)).toBe(traceOf(caller))
  expect(run.attributes).toMatchObject({
    'sluice.job.id': enqueued.id,
    'sluice.job.outcome': 'retrying',
    'error.type': 'TypeError',
  })
  expect(run.attributes['sluice.job.retry_in_ms']).toBeGreaterThan(0)
  expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the handler broke' })
  const exception = run.events.find((e) => e.name === 'exception')
  expect(exception?.attributes).toMatchObject({
    'exception.type': 'TypeError',
    'exception.message': 'the handler broke',
  })
  expect(one('sluice drain').attributes).toMatchObject({
    'sluice.drain.failed': 1,
    'sluice.drain.completed': 0,
  })
})

test('a job enqueued outside any trace runs as a child of its drain', async () => {
  env = await makeSluice({ jobs: [greet] })
  await env.sluice.enqueue(greet, { who: 'bo' })
  // Its enqueue was a trace of its own: the job stores that.
  const enqueue = one('sluice enqueue greet')
  expect(parentOf(enqueue)).toBeUndefined()
  await env.sql('UPDATE $schema.jobs SET trace_context = NULL')
  exporter.reset()
  await env.sluice.drain({ queues: ['default'] })
  const drain = one('sluice drain')
  const run = one('sluice run greet')
  expect(parentOf(run)).toBe(idOf(drain))
  expect(traceOf(run)).toBe(traceOf(drain))
  expect(run.links).toEqual([])
})

const heard: {
  headers: Record<string, string>
  span: string
  traceId: string
  sampled: boolean
  state?: string
}[] = []
const listener = defineSubscriber({
  name: 'listener',
  topic: 'orders.*',
  run: (_payload: unknown, ctx: { event: EventInfo }) => {
    const active = trace.getActiveSpan()!.spanContext()
    heard.push({
      headers: { ...ctx.event.headers },
      span: active.spanId,
      traceId: active.traceId,
      sampled: (active.traceFlags & 1) === 1,
      ...(active.traceState ? { state: active.traceState.serialize() } : {}),
    })
  },
})

test('HTTP publish: the event carries the trace in its headers and its subscriber runs continue it', async () => {
  heard.length = 0
  env = await makeSluice({ subscribers: [listener] })
  const app = appFor(env)
  const res = await postJson(
    app,
    '/events/orders.created',
    { payload: { id: 'o_1' }, headers: { source: 'web' } },
    { Authorization: 'Bearer sk_current_2f6b1c8e9a0d4e7f', traceparent: TRACEPARENT },
  )
  expect(res.status).toBe(202)
  const server = one('POST /events/:topic')
  expect(traceOf(server)).toBe(UPSTREAM_TRACE)
  const publish = one('sluice publish orders.created')
  expect(publish.kind).toBe(SpanKind.PRODUCER)
  expect(parentOf(publish)).toBe(idOf(server))
  expect(publish.attributes).toMatchObject({ 'sluice.event.topic': 'orders.created', 'sluice.event.jobs': 1 })

  exporter.reset()
  await env.sluice.drain({ queues: ['default'] })
  const run = one('sluice run listener')
  expect(traceOf(run)).toBe(UPSTREAM_TRACE)
  expect(parentOf(run)).toBe(idOf(publish))
  // The subscriber sees the trace headers beside its own.
  expect(heard).toEqual([
    {
      headers: { source: 'web', traceparent: `00-${UPSTREAM_TRACE}-${idOf(publish)}-01` },
      span: idOf(run),
      traceId: UPSTREAM_TRACE,
      sampled: true,
    },
  ])
})

test("a publish's own traceparent header wins, and a SQL publish's header is read as well", async () => {
  heard.length = 0
  env = await makeSluice({ subscribers: [listener] })
  const own = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`
  await env.sluice.publish('orders.paid', { id: 'o_2' }, { headers: { traceparent: own } })
  // Written to the outbox by any SQL client, relayed by the drain's claim.
  const fromSql = `00-${'12'.repeat(16)}-${'34'.repeat(8)}-00`
  await env.sql(`SELECT $schema.outbox_publish('orders.shipped', '{}'::jsonb, NULL, $1::jsonb)`, [
    JSON.stringify({ traceparent: fromSql, tracestate: 'k=v' }),
  ])
  // A malformed header is no trace context.
  await env.sql(`SELECT $schema.outbox_publish('orders.lost', '{}'::jsonb, NULL, $1::jsonb)`, [
    JSON.stringify({ traceparent: 'not-a-traceparent' }),
  ])
  exporter.reset()
  await env.sluice.drain({ queues: ['default'] })
  expect(heard).toHaveLength(3)
  const runs = named('sluice run listener')
  const drain = one('sluice drain')
  expect(runs.map((r) => `${traceOf(r)}-${parentOf(r)}`).sort()).toEqual(
    [`${'ab'.repeat(16)}-${'cd'.repeat(8)}`, `${traceOf(drain)}-${idOf(drain)}`].sort(),
  )
  // The SQL publisher's trace was not sampled: its run keeps that decision (a span that records
  // nothing, in that trace, with its tracestate), so it is not exported.
  const unsampled = heard.find((h) => h.traceId === '12'.repeat(16))
  expect(unsampled).toMatchObject({ sampled: false, state: 'k=v' })
})

test('controlled jobs, enqueueMany and a blocked job promoted later keep their trace context', async () => {
  const limited = defineJob({
    name: 'limited',
    input: z.object({ n: z.number() }),
    concurrency: { limit: 1, key: () => 'one' },
    run: () => {},
  })
  const many = defineJob({ name: 'many', input: z.object({ n: z.number() }), run: () => {} })
  env = await makeSluice({ jobs: [limited, many] })
  const tracer = trace.getTracer('app')
  await tracer.startActiveSpan('caller', async (span: Span) => {
    try {
      // The second takes no slot: it waits in `blocked` until the first settles.
      await env!.sluice.enqueue(limited, { n: 1 })
      await env!.sluice.enqueue(limited, { n: 2 })
      await env!.sluice.enqueueMany(many, [{ n: 1 }, { n: 2 }, { n: 3 }])
    } finally {
      span.end()
    }
  })
  const caller = one('caller')
  const enqueues = named('sluice enqueue limited')
  expect(enqueues).toHaveLength(2)
  const batch = one('sluice enqueue many')
  expect(batch.attributes).toMatchObject({ 'messaging.batch.message_count': 3, 'sluice.enqueue.enqueued': 3 })
  const blocked = await env.sql<{ trace_context: string }>('SELECT trace_context FROM $schema.blocked')
  expect(blocked.map((r) => r.trace_context)).toEqual([`00-${traceOf(caller)}-${idOf(enqueues[1]!)}-01`])
  const stored = await env.sql<{ trace_context: string }>(
    "SELECT trace_context FROM $schema.jobs WHERE name = 'many'",
  )
  expect(stored.map((r) => r.trace_context)).toEqual(Array(3).fill(`00-${traceOf(caller)}-${idOf(batch)}-01`))

  exporter.reset()
  // Until the promoted job has run too.
  for (let i = 0; i < 5 && named('sluice run limited').length < 2; i++)
    await env.sluice.drain({ queues: ['default'] })
  const runs = named('sluice run limited')
  expect(runs.map(parentOf).sort()).toEqual(enqueues.map(idOf).sort())
  expect(named('sluice run many').map(parentOf)).toEqual([idOf(batch), idOf(batch), idOf(batch)])
  for (const run of spans().filter((s) => s.name.startsWith('sluice run ')))
    expect(traceOf(run)).toBe(traceOf(caller))
})

test('statements outside any trace get no span; maintenance gets one', async () => {
  env = await makeSluice({ jobs: [greet] })
  await env.sluice.inspect.queues()
  await env.sluice.stats()
  expect(spans()).toEqual([])
  await env.sluice.maintain()
  const maintain = one('sluice maintain')
  expect(maintain.attributes['sluice.maintain.tasks']).toEqual(expect.arrayContaining(['reap-invocations']))
  expect(statementsUnder(maintain).length).toBeGreaterThan(0)
})

test('`statements: false` leaves statements without spans; `tracing: false` traces nothing', async () => {
  env = await makeSluice({ jobs: [greet], tracing: { statements: false } })
  await trace.getTracer('app').startActiveSpan('caller', async (span: Span) => {
    await env!.sluice.enqueue(greet, { who: 'cy' })
    span.end()
  })
  await env.sluice.drain({ queues: ['default'] })
  expect(spans().filter((s) => s.attributes['db.system'] !== undefined)).toEqual([])
  expect(named('sluice run greet')).toHaveLength(1)
  await env.cleanup()

  exporter.reset()
  env = await makeSluice({ jobs: [greet], tracing: false })
  const app = appFor(env)
  await trace.getTracer('app').startActiveSpan('caller', async (span: Span) => {
    await env!.sluice.enqueue(greet, { who: 'di' })
    span.end()
  })
  await postJson(
    app,
    '/jobs/greet',
    { input: { who: 'ed' } },
    {
      Authorization: 'Bearer sk_current_2f6b1c8e9a0d4e7f',
      traceparent: TRACEPARENT,
    },
  )
  const rows = await env.sql<{ trace_context: string | null }>('SELECT trace_context FROM $schema.jobs')
  expect(rows.map((r) => r.trace_context)).toEqual([null, null])
  await env.sluice.drain({ queues: ['default'] })
  expect(spans().map((s) => s.name)).toEqual(['caller'])
})

test('a tracer provider given in the options is used instead of the global one', async () => {
  const own = new InMemorySpanExporter()
  const ownProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(own)] })
  const sluice = createSluice({
    database: databaseUrl,
    schema: `given_${process.pid}_${Date.now().toString(36)}`,
    jobs: [greet],
    tracing: { tracerProvider: ownProvider },
  })
  try {
    await sluice.migrate()
    exporter.reset()
    await sluice.enqueue(greet, { who: 'fay' })
    await sluice.drain({ queues: ['default'] })
    const names = own.getFinishedSpans().map((s) => s.name)
    expect(names).toEqual(
      expect.arrayContaining(['sluice enqueue greet', 'sluice drain', 'sluice run greet']),
    )
    // The handler's own span (its tracer is the application's) is all the global provider got.
    expect(spans().map((s) => s.name)).toEqual(['greeting'])
  } finally {
    await (await sluice.db()).query({ text: `DROP SCHEMA "${sluice.config.schema}" CASCADE`, values: [] })
    await sluice.close()
    await ownProvider.shutdown()
  }
})

test("the admin API's requests get spans named after the route that answered", async () => {
  env = await makeSluice({ jobs: [greet] })
  const app = appFor(env)
  const headers = { Authorization: 'Bearer sk_current_2f6b1c8e9a0d4e7f', traceparent: TRACEPARENT }
  expect((await app.request('/api/v1/jobs/123', { headers })).status).toBe(404)
  const span = one('GET /api/v1/jobs/:id')
  expect(span.kind).toBe(SpanKind.SERVER)
  expect(parentOf(span)).toBe(UPSTREAM_SPAN)
  expect(span.attributes).toMatchObject({
    'http.route': '/api/v1/jobs/:id',
    'http.response.status_code': 404,
  })
  // A 4xx is the client's: not an error of the server span.
  expect(span.status.code).toBe(SpanStatusCode.UNSET)
  expect(statementsUnder(span).length).toBe(1)
})
