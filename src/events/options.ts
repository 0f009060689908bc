import * as z from 'zod/mini'

export interface EventOptions {
  /** How long processed-event marks and delivery records are kept, ms: the dedupe window of event ids. Default 7 days. */
  processedRetentionMs: number
  /** How long published outbox entries are kept, ms. Default 7 days. */
  outboxRetentionMs: number
  /** Outbox entries one relay statement publishes. Default 500. */
  relayBatchSize: number
  /** Relay statements one maintenance run issues at most. Default 20. */
  relayBatchesPerRun: number
  /** Outbox entries a drain relays with its first claim, when its budget allows; 0 turns it off. Default 100. */
  drainRelayLimit: number
}

export const EVENT_DEFAULTS: EventOptions = {
  processedRetentionMs: 7 * 86_400_000,
  outboxRetentionMs: 7 * 86_400_000,
  relayBatchSize: 500,
  relayBatchesPerRun: 20,
  drainRelayLimit: 100,
}

/** A drain relays only with at least this much of its budget left, ms. */
export const DRAIN_RELAY_MIN_MS = 1_000

export const eventOptionsSchema = z.lazy(() =>
  z.partial(
    z.strictObject({
      processedRetentionMs: z.int().check(z.minimum(0)),
      outboxRetentionMs: z.int().check(z.minimum(0)),
      relayBatchSize: z.int().check(z.minimum(1), z.maximum(100_000)),
      relayBatchesPerRun: z.int().check(z.minimum(1), z.maximum(10_000)),
      drainRelayLimit: z.int().check(z.minimum(0), z.maximum(100_000)),
    }),
  ),
)
