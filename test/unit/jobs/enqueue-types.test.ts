import { expect, test } from 'vitest'
import * as z from 'zod'
import { createSluice, defineJob, defineSubscriber } from '../../../src/index.js'

const hello = defineJob({ name: 'hello', input: z.object({ who: z.string() }), run: () => {} })
const audit = defineSubscriber({ name: 'audit', topic: 'orders.#', run: () => {} })

// Checked by `npm run typecheck` (tsc over test/): each @ts-expect-error fails the check if its line compiles.
function typeChecks(): void {
  const sluice = createSluice({ database: 'postgres://unused/x', jobs: [hello], subscribers: [audit] })
  void sluice.enqueue(hello, { who: 'ada' })
  void sluice.enqueueMany(hello, [{ who: 'ada' }])
  void sluice.enqueue('hello', { anything: true })
  // @ts-expect-error a subscriber's jobs are written by publish, not enqueued
  void sluice.enqueue(audit, { topic: 'orders.created', payload: {} })
  // @ts-expect-error nor many of them
  void sluice.enqueueMany(audit, [{}])
  // @ts-expect-error a job's input is still checked
  void sluice.enqueue(hello, { who: 1 })
}

test('enqueue refuses a subscriber at the type level (see typeChecks; run time refuses it too)', async () => {
  expect(typeof typeChecks).toBe('function')
  const sluice = createSluice({ database: 'postgres://unused/x', jobs: [hello], subscribers: [audit] })
  await expect(sluice.enqueue(audit as never, {} as never)).rejects.toThrow(/subscriber/)
})
