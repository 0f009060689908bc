import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

describe('the deadline', () => {
  test('a handler whose work was done before the deadline settles as completed, however late the event loop gets to it', async () => {
    const job = defineJob({
      name: 'done-before-deadline',
      input: z.object({ block: z.boolean() }),
      retry: 1,
      run: async (input, ctx) => {
        if (!input.block) return
        // Go on inside a check-phase callback: what is queued now is handled on the loop's next turn.
        await new Promise((resolve) => setImmediate(resolve))
        // The work is done; its completion waits in the event loop, as a reply read from a socket would.
        const done = new Promise((resolve) => setImmediate(resolve))
        // CPU load: the event loop is blocked until past the deadline.
        while (Date.now() <= ctx.deadline.getTime() + 20) {
          // busy
        }
        await done
      },
    })
    env = await makeSluice({ jobs: [job], drain: { safetyMarginMs: 0 } })
    // Seen once, so that its expected duration is known to fit a short drain.
    await env.sluice.enqueue(job, { block: false })
    expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
    await env.sluice.enqueue(job, { block: true })
    const summary = await env.sluice.drain({ budgetMs: 300 })
    expect(await env.sluice.deadLetters.list()).toEqual([])
    expect(summary).toMatchObject({ claimed: 1, completed: 1, failed: 0 })
    expect(await env.sql(`SELECT status FROM $schema.archive`)).toEqual([
      { status: 'completed' },
      { status: 'completed' },
    ])
  })
})
