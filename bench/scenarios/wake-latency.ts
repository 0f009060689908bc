import type { AddressInfo } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import * as z from 'zod'
import { createApp } from '../../src/http/app.js'
import { createSluice, defineJob, type Sluice } from '../../src/index.js'
import { schemaName, sizes } from '../lib/sizes.js'
import { latencyMeasurement } from '../lib/stats.js'
import type { Measurement, Scenario } from '../lib/types.js'

const SECRET = 'bench-wake-secret-0123456789'
const POLL_MS = 1_000
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** A Sluice whose one job records how long after its enqueue its handler started. */
function latencySluice(url: string, schema: string, latencies: number[], wake?: { url: string }): Sluice {
  const job = defineJob({
    name: 'latency-probe',
    input: z.object({ at: z.number() }),
    timeout: 2_000,
    run: (input) => {
      latencies.push(Date.now() - input.at)
    },
  })
  return createSluice({
    database: url,
    schema,
    jobs: [job],
    env: {},
    ...(wake ? { wake: { url: wake.url, secret: SECRET, debounceMs: 0 } } : {}),
  })
}

async function sample(sluice: Sluice, latencies: number[], n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await sluice.enqueue('latency-probe', { at: Date.now() })
    // Enqueues land at random moments relative to the drains.
    await sleep(50 + Math.random() * 200)
  }
  const deadline = Date.now() + 10_000
  while (latencies.length < n && Date.now() < deadline) await sleep(50)
}

/** Scenario 4: enqueue to handler start, with wake-ups (signed POST to a drain endpoint) and without (a drain polling every second). */
export const wakeLatency: Scenario = {
  name: 'wake-latency',
  title: 'Latency from enqueue to handler start, with and without wake-ups',
  async run(ctx) {
    const n = Math.min(100, Math.ceil(sizes(ctx.size).latencySamples / 3))
    const out: Measurement[] = []

    // Without wake-ups: what a drain polling every second (or a cron tick) gives.
    const polled: number[] = []
    const schemaA = schemaName('sluice_poll')
    const plain = latencySluice(ctx.url, schemaA, polled)
    await plain.migrate()
    let polling = true
    const loop = (async () => {
      while (polling) {
        await plain.drain({ budgetMs: 5_000 })
        await sleep(POLL_MS)
      }
    })()
    try {
      await sample(plain, polled, n)
    } finally {
      polling = false
      await loop
      await plain.close()
    }

    // With wake-ups: the enqueue statement opens the window and a signed POST /drain starts a
    // drain in the HTTP app (a local server standing in for the drain function).
    const woken: number[] = []
    const schemaB = schemaName('sluice_wake')
    const drainSide = latencySluice(ctx.url, schemaB, woken)
    await drainSide.migrate()
    const app = createApp(drainSide, { auth: { secrets: [SECRET] }, env: {} })
    const server = createAdaptorServer({ fetch: app.fetch })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const drainUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/drain`
    const enqueuer = latencySluice(ctx.url, schemaB, [], { url: drainUrl })
    try {
      await sample(enqueuer, woken, n)
    } finally {
      await enqueuer.close()
      await new Promise((resolve) => server.close(resolve))
      await drainSide.close()
    }

    for (const [id, label, values] of [
      ['latency.poll', `drain polling every ${POLL_MS} ms, no wake-ups`, polled],
      ['latency.wake', 'wake-up after enqueue (signed POST /drain, debounce 0)', woken],
    ] as const)
      out.push(latencyMeasurement('wake-latency', id, label, values))
    return {
      measurements: out,
      notes: [
        `${n} jobs each way, enqueued 50-250 ms apart; the wake-up drain runs in a local HTTP server (no cold start), so a deployed function adds its own start-up.`,
      ],
    }
  },
}
