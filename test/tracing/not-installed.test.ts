import { afterEach, expect, test, vi } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, postJson, SECRET } from '../helpers/http.js'

// As where `@opentelemetry/api` is not installed: importing it fails. Sluice works the same.
vi.mock('@opentelemetry/api', () => {
  throw new Error("Cannot find package '@opentelemetry/api'")
})

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const ran: number[] = []
const plain = defineJob({
  name: 'plain',
  input: z.object({ n: z.number() }),
  run: (input) => {
    ran.push(input.n)
  },
})

test('without @opentelemetry/api, enqueue, HTTP, publish, drain and maintenance work untraced', async () => {
  env = await makeSluice({ jobs: [plain] })
  const app = appFor(env)
  await env.sluice.enqueue(plain, { n: 1 })
  await env.sluice.enqueueMany(plain, [{ n: 2 }, { n: 3 }])
  const traceparent = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`
  const res = await postJson(
    app,
    '/jobs/plain',
    { input: { n: 4 } },
    { Authorization: `Bearer ${SECRET}`, traceparent },
  )
  expect(res.status).toBe(202)
  await env.sluice.publish('nobody.listens', {})
  const stored = await env.sql<{ trace_context: string | null }>('SELECT trace_context FROM $schema.jobs')
  expect(stored.map((r) => r.trace_context)).toEqual([null, null, null, null])
  expect(await env.sluice.drain({ queues: ['default'] })).toMatchObject({ claimed: 4, completed: 4 })
  expect(ran.sort()).toEqual([1, 2, 3, 4])
  await env.sluice.maintain()
})
