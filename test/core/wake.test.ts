import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Hono } from 'hono'
import { afterEach, expect, test } from 'vitest'
import * as z from 'zod'
import { defineJob, defineSubscriber, signatureAuth } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

const SECRET = 'wake-secret-0123456789abcdef'
let env: TestSluice | undefined
let server: Server | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
  if (server) await new Promise((resolve) => server!.close(resolve))
  server = undefined
})

/** A stand-in drain endpoint that checks signatures the way the app does and records each wake-up. */
async function drainEndpoint(): Promise<{ url: string; wakes: { queues: string[] }[]; rejected: number }> {
  const state = { url: '', wakes: [] as { queues: string[] }[], rejected: 0 }
  const app = new Hono()
  // Served under a path of its own: wake-ups sign the drain route, not the URL's path.
  app.post('/hooks/sluice-drain', signatureAuth({ secrets: [SECRET], path: '/drain' }), async (c) => {
    const { queues } = await c.req.json()
    state.wakes.push({ queues })
    return c.json({ ok: true })
  })
  app.onError((_, c) => {
    state.rejected++
    return c.json({}, 401)
  })
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const response = await app.request(req.url ?? '/', {
      method: req.method ?? 'GET',
      headers: req.headers as Record<string, string>,
      body: Buffer.concat(chunks),
    })
    res.writeHead(response.status, { 'content-type': 'application/json' })
    res.end(await response.text())
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  state.url = `http://127.0.0.1:${(server!.address() as AddressInfo).port}/hooks/sluice-drain`
  return state
}

const ping = defineJob({ name: 'ping', queue: 'pings', input: z.object({ n: z.number() }), run: () => {} })

test('enqueues wake the drains once per debounce window, signed, in the same statement', async () => {
  const endpoint = await drainEndpoint()
  const pending: Promise<unknown>[] = []
  env = await makeSluice({
    jobs: [ping],
    wake: { url: endpoint.url, secret: SECRET, debounceMs: 60_000, waitUntil: (p) => void pending.push(p) },
  })
  for (let n = 0; n < 10; n++) await env.sluice.enqueue(ping, { n })
  await env.sluice.enqueueMany(ping, [{ n: 10 }, { n: 11 }])
  // Still one statement per enqueue: the wake-up check rides along.
  expect(env.statements.count).toBe(11)
  await Promise.all(pending)
  expect(endpoint.wakes).toEqual([{ queues: ['pings'] }])
  expect(endpoint.rejected).toBe(0)

  // Delayed jobs and jobs inside a caller's transaction wake nobody.
  await env.sql(`UPDATE $schema.wakeups SET last_at = now() - interval '2 minutes'`)
  await env.sluice.enqueue(ping, { n: 12 }, { delay: 60_000 })
  await Promise.all(pending)
  expect(endpoint.wakes).toHaveLength(1)

  // Once the window has passed, the next due enqueue wakes again.
  await env.sluice.enqueue(ping, { n: 13 })
  await Promise.all(pending)
  expect(endpoint.wakes).toHaveLength(2)
})

test('a wake-up that fails never fails the enqueue', async () => {
  env = await makeSluice({ jobs: [ping], wake: { url: 'http://127.0.0.1:1/drain', secret: SECRET } })
  expect(await env.sluice.enqueue(ping, { n: 1 })).toMatchObject({ status: 'enqueued' })
})

test('maintenance wakes as many drains as the backlog needs, up to maxParallel', async () => {
  const endpoint = await drainEndpoint()
  env = await makeSluice({
    jobs: [ping],
    wake: { url: endpoint.url, secret: SECRET, onEnqueue: false, jobsPerDrain: 100, maxParallel: 3 },
  })
  await env.sluice.enqueueMany(
    ping,
    Array.from({ length: 250 }, (_, n) => ({ n })),
  )
  expect(endpoint.wakes).toHaveLength(0)
  const report = await env.sluice.maintain()
  expect(report.tasks.find((t) => t.task === 'wake-drains')).toMatchObject({ ran: true, rows: 3 })
  expect(endpoint.wakes).toEqual([{ queues: ['pings'] }, { queues: ['pings'] }, { queues: ['pings'] }])
  // A paused queue is not woken.
  await env.sluice.pause('pings')
  await env.sql(`UPDATE $schema.maintenance SET next_run_at = now() - interval '1 ms'`)
  expect((await env.sluice.maintain()).tasks.find((t) => t.task === 'wake-drains')).toMatchObject({ rows: 0 })
})

test('publish wakes the queues of the matched subscribers, once per debounce window, in its one statement', async () => {
  const endpoint = await drainEndpoint()
  const pending: Promise<unknown>[] = []
  env = await makeSluice({
    jobs: [ping],
    subscribers: [
      defineSubscriber({ name: 'billing', topic: 'orders.*', queue: 'billing', run: () => {} }),
      defineSubscriber({ name: 'mail', topic: 'orders.created', queue: 'mail', run: () => {} }),
      defineSubscriber({ name: 'idle', topic: 'users.#', queue: 'idle', run: () => {} }),
    ],
    wake: { url: endpoint.url, secret: SECRET, debounceMs: 60_000, waitUntil: (p) => void pending.push(p) },
  })
  for (let n = 0; n < 5; n++) await env.sluice.publish('orders.created', { n })
  expect(env.statements.count).toBe(5)
  await Promise.all(pending)
  expect(endpoint.wakes.flatMap((w) => w.queues).sort()).toEqual(['billing', 'mail'])

  // A delayed event wakes nobody; past the window, the next publish wakes its queues again.
  await env.sql(`UPDATE $schema.wakeups SET last_at = now() - interval '2 minutes'`)
  await env.sluice.publish('orders.paid', {}, { delay: 60_000 })
  await env.sluice.publish('orders.paid', {})
  await Promise.all(pending)
  expect(endpoint.wakes.flatMap((w) => w.queues).sort()).toEqual(['billing', 'billing', 'mail'])
})

test("ctx.invoke wakes the child's queue, once per debounce window", async () => {
  const endpoint = await drainEndpoint()
  const pending: Promise<unknown>[] = []
  const child = defineJob({
    name: 'child',
    queue: 'children',
    input: z.object({ n: z.number() }),
    run: () => {},
  })
  const parent = defineJob({
    name: 'parent',
    queue: 'parents',
    input: z.object({ n: z.number() }),
    run: async ({ n }, ctx) => {
      await ctx.invoke('one', child, { n })
    },
  })
  env = await makeSluice({
    jobs: [parent, child],
    wake: { url: endpoint.url, secret: SECRET, debounceMs: 60_000, waitUntil: (p) => void pending.push(p) },
  })
  await env.sluice.enqueueMany(parent, [{ n: 1 }, { n: 2 }])
  await Promise.all(pending)
  expect(endpoint.wakes).toEqual([{ queues: ['parents'] }])
  // A drain of the parents' queue only: the children wait for another drain, which is woken once.
  expect(await env.sluice.drain({ queues: ['parents'] })).toMatchObject({ claimed: 2 })
  await Promise.all(pending)
  expect(endpoint.wakes).toEqual([{ queues: ['parents'] }, { queues: ['children'] }])
  expect(endpoint.rejected).toBe(0)
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs WHERE queue = 'children'`)).toEqual([
    { n: 2 },
  ])
})

test("a parent that its last child's end makes due wakes its queue's drains", async () => {
  const endpoint = await drainEndpoint()
  const pending: Promise<unknown>[] = []
  const child = defineJob({ name: 'child', queue: 'children', input: z.object({}), run: () => {} })
  const parent = defineJob({
    name: 'parent',
    queue: 'parents',
    input: z.object({}),
    run: async (_input, ctx) => {
      await ctx.invoke('one', child, {})
    },
  })
  env = await makeSluice({
    jobs: [parent, child],
    wake: { url: endpoint.url, secret: SECRET, debounceMs: 60_000, waitUntil: (p) => void pending.push(p) },
  })
  const woken = async (): Promise<string[]> => {
    await Promise.all(pending)
    const queues = endpoint.wakes.flatMap((w) => w.queues)
    endpoint.wakes.length = 0
    // Every window over, as if a minute had passed.
    await env!.sql(`UPDATE $schema.wakeups SET last_at = now() - interval '2 minutes'`)
    return queues
  }
  // A drain runs the parent, which invokes its child and suspends: the child's queue is woken. The
  // drain that runs the child makes the parent due with its last settle: the parents' queue is woken.
  await env.sluice.enqueue(parent, {})
  expect(await woken()).toEqual(['parents'])
  expect(await env.sluice.drain()).toMatchObject({ claimed: 1, completed: 0 })
  expect(await woken()).toEqual(['children'])
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(await woken()).toEqual(['parents'])
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })

  // Drains of one queue each: the children's drain wakes the parents' queue.
  await env.sluice.enqueue(parent, {})
  expect(await woken()).toEqual(['parents'])
  expect(await env.sluice.drain({ queues: ['parents'] })).toMatchObject({ claimed: 1, completed: 0 })
  expect(await woken()).toEqual(['children'])
  expect(await env.sluice.drain({ queues: ['children'] })).toMatchObject({ completed: 1 })
  expect(await woken()).toEqual(['parents'])
  expect(await env.sluice.drain({ queues: ['parents'] })).toMatchObject({ completed: 1 })
})
