import { z } from 'zod'
import { defineJob, defineRecurring, defineSubscriber, PermanentJobError } from '../../src/index.js'

/** Text that would run as script if any page forgot to escape it. */
export const HOSTILE = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'

export const greet = defineJob({ name: 'greet', input: z.object({ to: z.string() }), run: () => {} })
export const doomed = defineJob({
  name: 'doomed',
  queue: 'doomed',
  input: z.object({ note: z.string() }),
  run: (input) => {
    throw new PermanentJobError(input.note)
  },
})
export const send = defineJob({
  name: 'send',
  queue: 'sends',
  input: z.object({ account: z.string() }),
  admission: { partition: (i) => i.account, concurrency: { max: 1 } },
  run: () => {},
})
export const report = defineJob({
  name: 'report',
  queue: 'reports',
  input: z.object({ title: z.string() }),
  unique: { key: (i) => `report:${i.title}` },
  run: () => {},
})
export const charge = defineJob({
  name: 'charge',
  queue: 'billing',
  input: z.object({ account: z.string() }),
  concurrency: { limit: 1, key: (i) => `acct:${i.account}` },
  run: () => {},
})
export const audit = defineSubscriber({ name: 'audit', topic: 'orders.#', queue: 'events', run: () => {} })

export const nightly = defineRecurring({
  name: 'nightly',
  cron: '0 3 * * *',
  job: greet,
  input: { to: 'ops' },
})

export const JOBS = [greet, doomed, send, report, charge]
export const SUBSCRIBERS = [audit]

/** Every page the nav links to, relative to the dashboard's path (the page contract). */
export const NAV = [
  '/',
  '/queues',
  '/jobs',
  '/dead-letters',
  '/invocations',
  '/recurring',
  '/batches',
  '/events',
  '/locks',
  '/policies',
  '/insights',
  '/database',
]
