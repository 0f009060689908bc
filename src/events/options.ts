import * as z from 'zod'

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

export const eventOptionsSchema = z
  .object({
    processedRetentionMs: z.number().int().min(0),
    outboxRetentionMs: z.number().int().min(0),
    relayBatchSize: z.number().int().min(1).max(100_000),
    relayBatchesPerRun: z.number().int().min(1).max(10_000),
    drainRelayLimit: z.number().int().min(0).max(100_000),
  })
  .strict()
  .partial()
