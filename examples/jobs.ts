import { setTimeout as sleep } from 'node:timers/promises'
import * as z from 'zod/mini'
import { defineJob, defineSubscriber, PermanentJobError, type Queryable } from '../src/index.js'
import { welcomeEmailContract } from './contracts.js'

/** How handlers reach the app's tables: the database Sluice runs on (one PGlite per process in dev). */
export type Database = () => Promise<Queryable>

const yesterday = (): string => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)

/** The example's jobs. Handlers write to the `example` schema (see schema.ts); nothing leaves the machine. */
export function exampleJobs(db: Database) {
  /** Sends (writes to the outbox) the welcome email of a user who just signed up. */
  const welcomeEmail = defineJob({
    ...welcomeEmailContract,
    timeout: 10_000,
    run: async (input) => {
      // A mailer would send from this table. Keyed by user, so a retried or re-delivered job
      // never greets anyone twice.
      const { rowCount } = await (await db()).query({
        text: `INSERT INTO example.outbox (dedupe_key, recipient, subject, body)
VALUES ($1, $2, $3, $4) ON CONFLICT (dedupe_key) DO NOTHING`,
        values: [
          `welcome:${input.userId}`,
          input.email,
          'Welcome aboard',
          `Hello ${input.name ?? input.email}, thanks for signing up.`,
        ],
      })
      return { queued: rowCount === 1 }
    },
  })

  /**
   * Sums up one day (yesterday unless told otherwise). Unique per day: enqueueing the same
   * day again while one is queued or running is a no-op. The nightly recurring task runs it.
   */
  const generateReport = defineJob({
    name: 'generate-report',
    queue: 'reports',
    input: z.object({ day: z.optional(z.iso.date()) }),
    unique: { key: (input) => `report:${input.day ?? yesterday()}`, onConflict: 'discard' },
    retry: 3,
    timeout: 30_000,
    run: async (input) => {
      await (await db()).query({
        text: `INSERT INTO example.reports (day, emails, images)
SELECT $1::date,
       (SELECT count(*) FROM example.outbox WHERE created_at >= $1::date AND created_at < $1::date + 1),
       (SELECT count(*) FROM example.images WHERE resized_at >= $1::date AND resized_at < $1::date + 1)
ON CONFLICT (day) DO UPDATE SET emails = excluded.emails, images = excluded.images, generated_at = now()`,
        values: [input.day ?? yesterday()],
      })
    },
  })

  /**
   * Resizes an image through a flaky (simulated) image service that takes two requests at a
   * time: a concurrency limit of 2 holds the rest back. About one run in three fails and is
   * retried with backoff. An image id starting with `missing` names an image that does not
   * exist: that failure is permanent, so the job goes to the dead letters at once.
   */
  const resizeImage = defineJob({
    name: 'resize-image',
    queue: 'images',
    input: z.object({
      imageId: z.string().check(z.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, "_" or "-"')),
      width: z.int().check(z.minimum(16), z.maximum(4096)),
    }),
    concurrency: { limit: 2, key: () => 'image-service' },
    retry: { maxAttempts: 4, baseDelayMs: 1_000 },
    timeout: 5_000,
    run: async (input, ctx) => {
      if (input.imageId.startsWith('missing')) {
        throw new PermanentJobError(`Image ${input.imageId} does not exist: nothing to resize`)
      }
      await sleep(20 + Math.random() * 80, undefined, { signal: ctx.signal })
      if (Math.random() < 1 / 3) throw new Error('Image service timed out (simulated)')
      await (await db()).query({
        text: `INSERT INTO example.images (image_id, width) VALUES ($1, $2)
ON CONFLICT (image_id, width) DO UPDATE SET resized_at = now()`,
        values: [input.imageId, input.width],
      })
    },
  })

  return { welcomeEmail, generateReport, resizeImage }
}

/** An order event's payload, as the shop publishes it on `orders.created`, `orders.paid`, … */
export const orderEvent = z.object({
  orderId: z.string().check(z.minLength(1), z.maxLength(100)),
  customer: z.optional(z.email()),
  total: z.optional(z.number().check(z.nonnegative())),
})

/**
 * The example's event subscribers: every order event lands in an audit log (`orders.#`), and
 * a created order is queued for fulfilment (`orders.created`). Each writes inside
 * `ctx.transaction`, so its row and the event's processed mark commit together: a re-delivered
 * event never writes twice.
 */
export function exampleSubscribers() {
  const orderAudit = defineSubscriber({
    name: 'order-audit',
    topic: 'orders.#',
    queue: 'events',
    input: orderEvent,
    run: async (order, ctx) => {
      await ctx.transaction((tx) =>
        tx.query({
          text: 'INSERT INTO example.order_audit (event_id, topic, order_id) VALUES ($1, $2, $3)',
          values: [ctx.event.id, ctx.event.topic, order.orderId],
        }),
      )
    },
  })

  const orderFulfilment = defineSubscriber({
    name: 'order-fulfilment',
    topic: 'orders.created',
    queue: 'fulfilment',
    input: orderEvent,
    run: async (order, ctx) => {
      await ctx.transaction((tx) =>
        tx.query({
          text: `INSERT INTO example.fulfilments (order_id, customer) VALUES ($1, $2)
ON CONFLICT (order_id) DO NOTHING`,
          values: [order.orderId, order.customer ?? null],
        }),
      )
    },
  })

  return { orderAudit, orderFulfilment }
}
