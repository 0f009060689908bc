import { ProxyTracer, ProxyTracerProvider, trace } from '@opentelemetry/api'
import { afterEach, expect, test, vi } from 'vitest'
import { z } from 'zod'
import { defineJob, defineSubscriber, type EventInfo } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, postJson, SECRET } from '../helpers/http.js'

// `@opentelemetry/api` is installed here (a dev dependency) and no tracer provider is registered:
// the state of an application that does not trace, or whose SDK has not started. Sluice must then
// make no span object at all, not even a no-op one, and store no trace context.

let env: TestSluice | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  await env?.cleanup()
  env = undefined
})

const plain = defineJob({ name: 'plain', input: z.object({ n: z.number() }), run: () => {} })
const keyed = defineJob({
  name: 'keyed',
  input: z.object({ n: z.number() }),
  unique: { key: (input) => String(input.n) },
  run: () => {},
})
const headersSeen: Record<string, string>[] = []
const listener = defineSubscriber({
  name: 'listener',
  topic: 'things.*',
  run: (_payload: unknown, ctx: { event: EventInfo }) => {
    headersSeen.push({ ...ctx.event.headers })
  },
})

test('no provider registered: no tracer is asked for, no span made, no trace context stored', async () => {
  // Every way a span could come from the API without a provider: the global proxy provider and
  // its tracers, and the no-op provider and tracer they delegate to.
  const noopProvider = new ProxyTracerProvider().getDelegate()
  const noopTracer = noopProvider.getTracer('probe')
  const calls = [
    vi.spyOn(trace, 'getTracer'),
    vi.spyOn(ProxyTracerProvider.prototype, 'getTracer'),
    vi.spyOn(ProxyTracer.prototype, 'startSpan'),
    vi.spyOn(ProxyTracer.prototype, 'startActiveSpan'),
    vi.spyOn(Object.getPrototypeOf(noopProvider), 'getTracer'),
    vi.spyOn(Object.getPrototypeOf(noopTracer), 'startSpan'),
    vi.spyOn(Object.getPrototypeOf(noopTracer), 'startActiveSpan'),
  ]
  headersSeen.length = 0
  env = await makeSluice({ jobs: [plain, keyed], subscribers: [listener] })
  const app = appFor(env)
  const traceparent = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`

  await env.sluice.enqueue(plain, { n: 1 })
  await env.sluice.enqueueMany(plain, [{ n: 2 }, { n: 3 }])
  await env.sluice.enqueue(keyed, { n: 4 })
  const res = await postJson(
    app,
    '/jobs/plain',
    { input: { n: 5 } },
    { Authorization: `Bearer ${SECRET}`, traceparent },
  )
  expect(res.status).toBe(202)
  await env.sluice.publish('things.done', { n: 6 })
  // The plain INSERTs bind a null trace context, nothing more.
  const inserts = env.statements.events.filter((e) => /^INSERT/.test(e.text))
  expect(inserts.map((e) => e.values.at(-1))).toEqual([null, null, null])
  const stored = await env.sql<{ trace_context: string | null }>('SELECT trace_context FROM $schema.jobs')
  expect(stored.map((r) => r.trace_context)).toEqual(Array(6).fill(null))

  const summary = await env.sluice.drain({ queues: ['default'] })
  expect(summary).toMatchObject({ claimed: 6, completed: 6 })
  await env.sluice.maintain()
  expect(headersSeen).toEqual([{}])
  for (const spy of calls) expect(spy).not.toHaveBeenCalled()
})
