/**
 * A Sluice with data in every state the dashboard shows, made through the public API (enqueue,
 * drain, controls, publish, batches, recurring tasks) rather than hand-written rows, so the
 * pages see what a real deployment produces. One drain stays running in the background (its
 * handlers wait until `release()`), holding a single-consumer queue and a partition's only slot.
 */
import { z } from 'zod'
import { type DrainSummary, defineJob, defineRecurring, defineSubscriber } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

const HOUR = 3_600_000

/** A promise with its resolver. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

export interface Seeded extends TestSluice {
  /** Job ids by what they are seeded as. */
  ids: {
    ready: string[]
    /** Due in an hour. */
    scheduled: string
    /** Failed once, its retry due in about an hour. */
    retrying: string
    /** Waits in a queue paused by hand. */
    paused: string
    /** Waits in a queue whose breaker opened after a failure. */
    breakerOpen: string
    /** Its partition spent its one token for the hour. */
    throttled: string
    /** Its partition's one slot is taken by a running job. */
    atCap: string
    /** Its single-consumer queue is held by the background drain. */
    heldBySingleConsumer: string
    /** Its concurrency key's one slot is taken by an earlier job. */
    blockedBehindKey: string
    /** Held by the background drain. */
    running: string[]
    /** Holds a uniqueness lock. */
    unique: string
    /** Dead letters (ids of the dead-letter rows). */
    deadLetters: string[]
    batch: string
    /** Jobs of queue `purgeable`, for the purge action. */
    purgeable: string[]
  }
  /** The background drain's invocation id. */
  invocation: string
  /** Ends the background drain's handlers and waits for it, then drops the schema. */
  cleanup(): Promise<void>
}

export const QUEUES = {
  paused: 'paused-q',
  breaker: 'fragile',
  ledger: 'ledger',
  partner: 'partner',
  webhooks: 'webhooks',
  billing: 'billing',
  pausable: 'pausable',
  purgeable: 'purgeable',
} as const

export async function seed(): Promise<Seeded> {
  const release = gate()
  const started = { ledger: gate(), partner: gate() }

  const sendEmail = defineJob({
    name: 'send-email',
    input: z.object({ to: z.string() }),
    run: () => {},
  })
  const report = defineJob({ name: 'nightly-report', input: z.object({}), run: () => {} })
  const flaky = defineJob({
    name: 'flaky-sync',
    queue: 'sync',
    input: z.object({ account: z.string() }),
    retry: { maxAttempts: 3, baseDelayMs: HOUR, jitter: 0 },
    run: () => {
      throw new Error('upstream answered 502')
    },
  })
  const doomed = defineJob({
    name: 'doomed-import',
    queue: 'imports',
    input: z.object({ file: z.string() }),
    retry: 1,
    run: (input) => {
      throw new Error(`cannot parse ${input.file}`)
    },
  })
  const fragile = defineJob({
    name: 'fragile-call',
    queue: QUEUES.breaker,
    input: z.object({ n: z.number() }),
    retry: { maxAttempts: 5, baseDelayMs: HOUR, jitter: 0 },
    run: () => {
      throw new Error('partner is down')
    },
  })
  const postEntry = defineJob({
    name: 'post-entry',
    queue: QUEUES.ledger,
    input: z.object({ entry: z.number() }),
    timeout: 10 * 60_000,
    run: async () => {
      started.ledger.open()
      await release.promise
    },
  })
  const partnerCall = defineJob({
    name: 'partner-call',
    queue: QUEUES.partner,
    input: z.object({ tenant: z.string(), n: z.number() }),
    timeout: 10 * 60_000,
    admission: { partition: (i) => i.tenant, concurrency: { max: 1 } },
    run: async () => {
      started.partner.open()
      await release.promise
    },
  })
  const webhook = defineJob({
    name: 'deliver-webhook',
    queue: QUEUES.webhooks,
    input: z.object({ endpoint: z.string(), n: z.number() }),
    admission: { partition: (i) => i.endpoint, throttle: { rate: 1, per: HOUR, burst: 1 } },
    run: () => {},
  })
  const charge = defineJob({
    name: 'charge-customer',
    queue: QUEUES.billing,
    input: z.object({ customer: z.string(), cents: z.number() }),
    concurrency: { limit: 1, key: (i) => `customer:${i.customer}` },
    run: () => {},
  })
  const importOrder = defineJob({
    name: 'import-order',
    input: z.object({ order: z.string() }),
    unique: { key: (i) => `order:${i.order}` },
    run: () => {},
  })
  const importRow = defineJob({
    name: 'import-row',
    queue: 'rows',
    input: z.object({ row: z.number() }),
    run: () => {},
  })
  const chore = defineJob({ name: 'chore', input: z.object({ n: z.number() }), run: () => {} })
  const newsletter = defineJob({
    name: 'send-newsletter',
    queue: QUEUES.paused,
    input: z.object({ issue: z.number() }),
    run: () => {},
  })
  const sweep = defineJob({
    name: 'sweep-temp',
    queue: QUEUES.purgeable,
    input: z.object({ n: z.number() }),
    run: () => {},
  })
  const ping = defineJob({
    name: 'ping',
    queue: QUEUES.pausable,
    input: z.object({ n: z.number() }),
    run: () => {},
  })
  const billAccount = defineSubscriber({
    name: 'bill-account',
    topic: 'orders.*',
    queue: 'events',
    run: () => {},
  })
  const nightly = defineRecurring({ name: 'nightly', cron: '0 3 * * *', job: report, input: {} })

  const jobs = [
    sendEmail,
    report,
    flaky,
    doomed,
    fragile,
    postEntry,
    partnerCall,
    webhook,
    charge,
    importOrder,
    importRow,
    chore,
    newsletter,
    sweep,
    ping,
  ]
  const t = await makeSluice({
    jobs,
    subscribers: [billAccount],
    recurring: [nightly],
    queues: {
      [QUEUES.ledger]: { singleActiveConsumer: true },
      [QUEUES.breaker]: { circuitBreaker: { threshold: 1, baseMs: HOUR, capMs: HOUR } },
    },
    // Outbox entries stay pending until maintenance relays them (none runs after the seed).
    events: { drainRelayLimit: 0 },
  })
  const { sluice } = t
  const id = (r: { id: string | null }): string => {
    if (r.id === null) throw new Error('seed: an enqueue was not accepted')
    return r.id
  }

  // Maintenance first: it syncs the recurring task and would otherwise promote or reap below.
  await sluice.maintain()

  const ready = [
    id(await sluice.enqueue(sendEmail, { to: 'ada@example.com' })),
    id(await sluice.enqueue(sendEmail, { to: '<script>alert(1)</script>@example.com' })),
    id(await sluice.enqueue(chore, { n: 1 })),
  ]
  const scheduled = id(await sluice.enqueue(sendEmail, { to: 'later@example.com' }, { delay: HOUR }))
  const unique = id(await sluice.enqueue(importOrder, { order: 'o-1001' }))

  const retrying = id(await sluice.enqueue(flaky, { account: 'acme' }))
  await sluice.drain({ queues: ['sync'] })

  await sluice.enqueue(doomed, { file: 'users.csv' })
  await sluice.enqueue(doomed, { file: 'orders.csv' })
  await sluice.enqueue(doomed, { file: 'refunds.csv' })
  await sluice.drain({ queues: ['imports'] })
  const deadLetters = (await sluice.deadLetters.list()).map((d) => d.id)

  const paused = id(await sluice.enqueue(newsletter, { issue: 42 }))
  await sluice.pause(QUEUES.paused)
  // A queue with a job the tests pause and resume from the dashboard.
  await sluice.enqueue(ping, { n: 1 })

  // The breaker trips on the first failure (threshold 1) and stays open for an hour.
  await sluice.enqueue(fragile, { n: 1 })
  await sluice.drain({ queues: [QUEUES.breaker] })
  const breakerOpen = id(await sluice.enqueue(fragile, { n: 2 }))

  // The endpoint's one token of the hour is spent by the first delivery.
  await sluice.enqueue(webhook, { endpoint: 'hooks.example.com', n: 1 })
  await sluice.drain({ queues: [QUEUES.webhooks] })
  const throttled = id(await sluice.enqueue(webhook, { endpoint: 'hooks.example.com', n: 2 }))

  const chargeFirst = id(await sluice.enqueue(charge, { customer: 'c1', cents: 500 }))
  const blockedBehindKey = id(await sluice.enqueue(charge, { customer: 'c1', cents: 700 }))

  const batch = await sluice.batch({ properties: {} }, async (batchId) => {
    await sluice.enqueueMany(importRow, [{ row: 1 }, { row: 2 }, { row: 3 }], { batch: batchId })
  })

  await sluice.publish('orders.created', { orderId: 'o-1' })
  await sluice.publish('orders.created', { orderId: 'o-2' })
  await sluice.drain({ queues: ['events'], maxJobs: 1 })
  await t.sql(`SELECT $schema.outbox_publish('orders.paid', '{"orderId": "o-1"}'::jsonb)`)

  const purgeable = [
    id(await sluice.enqueue(sweep, { n: 1 })),
    id(await sluice.enqueue(sweep, { n: 2 })),
    id(await sluice.enqueue(sweep, { n: 3 })),
  ]

  // The background drain: it holds the ledger (single consumer) and the partner partition's slot.
  const running = [
    id(await sluice.enqueue(postEntry, { entry: 1 })),
    id(await sluice.enqueue(partnerCall, { tenant: 'globex', n: 1 })),
  ]
  const invocation = `drn_browser_${Date.now().toString(36)}`
  const drained: Promise<DrainSummary> = sluice.drain({
    queues: [QUEUES.ledger, QUEUES.partner],
    budgetMs: 20 * 60_000,
    concurrency: 4,
    invocationId: invocation,
  })
  drained.catch(() => {})
  await Promise.race([
    Promise.all([started.ledger.promise, started.partner.promise]),
    drained.then((summary) => {
      throw new Error(`seed: the background drain ended early: ${JSON.stringify(summary)}`)
    }),
  ])

  // Enqueued once the holder runs its first job: a single-consumer holder claims nothing more from
  // its queue until what it claimed has settled, and the partition's one slot is taken.
  const heldBySingleConsumer = id(await sluice.enqueue(postEntry, { entry: 2 }))
  const atCap = id(await sluice.enqueue(partnerCall, { tenant: 'globex', n: 2 }))

  return {
    ...t,
    ids: {
      ready: [...ready, chargeFirst],
      scheduled,
      retrying,
      paused,
      breakerOpen,
      throttled,
      atCap,
      heldBySingleConsumer,
      blockedBehindKey,
      running,
      unique,
      deadLetters,
      batch: batch.id,
      purgeable,
    },
    invocation,
    async cleanup() {
      release.open()
      await drained.catch(() => {})
      await t.cleanup()
    },
  }
}
