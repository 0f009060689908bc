import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import * as z from 'zod/mini'
import { defineJob } from '../../src/index.js'
import { vercelDrain, vercelHandlers } from '../../src/platforms/vercel.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

const SECRET = 'vercel-budget-secret-0123456789'
const LIMIT_MS = 3_000
/** How long the request's body takes to arrive: half the function's limit. */
const BODY_DELAY_MS = 1_500

/** The drain deadline each run of `stamp` saw. */
const deadlines: Date[] = []
const stamp = defineJob({
  name: 'stamp',
  queue: 'stamps',
  input: z.object({}),
  run: (_input, ctx) => {
    deadlines.push(ctx.deadline)
  },
})

let env: TestSluice
beforeAll(async () => {
  env = await makeSluice({ jobs: [stamp] })
})
afterAll(async () => {
  await env?.cleanup()
})

/** A drain request whose body arrives BODY_DELAY_MS after the request, as a slow client's does. */
function slowDrainRequest(url: string): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      setTimeout(() => {
        controller.enqueue(new TextEncoder().encode(JSON.stringify({ queues: ['stamps'] })))
        controller.close()
      }, BODY_DELAY_MS)
    },
  })
  return new Request(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
    body,
    duplex: 'half',
  } as RequestInit)
}

describe("a Vercel drain's deadline counts from the request's arrival, not from its body's", () => {
  const env_ = { SLUICE_SECRET: SECRET }
  test.each([
    [
      'vercelDrain (the lean drain function)',
      () => vercelDrain(env.sluice, { maxDurationMs: LIMIT_MS, env: env_ }).POST,
    ],
    [
      'vercelHandlers (the whole API)',
      () => vercelHandlers(env.sluice, { maxDurationMs: LIMIT_MS, env: env_ }).POST,
    ],
  ])('%s', async (_, handler) => {
    const POST = handler()
    deadlines.length = 0
    await env.sluice.enqueue(stamp, {})
    const arrived = Date.now()
    const res = await POST(slowDrainRequest('https://app.example.com/api/drain'))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ claimed: 1, completed: 1 })
    expect(deadlines).toHaveLength(1)
    // The function is stopped LIMIT_MS after the request arrived: the drain must end before.
    expect(deadlines[0]!.getTime()).toBeLessThanOrEqual(arrived + LIMIT_MS)
  })
})
