/**
 * Job contracts: what enqueueing needs (name, queue, input schema, priority, attempts,
 * uniqueness), without handlers. The edge function imports this file only, so no handler
 * code reaches it; jobs.ts defines each job from its contract.
 *
 * The example writes its schemas with zod/mini, which every deployed function bundles in a
 * third of zod classic's size and import time; Sluice takes either (docs/jobs.md).
 */
import * as z from 'zod/mini'
import { defineContract } from '../src/edge.js'

/** Greets a user who just signed up. */
export const welcomeEmailContract = defineContract({
  name: 'welcome-email',
  queue: 'emails',
  input: z.object({
    userId: z.string().check(z.minLength(1), z.maxLength(100)),
    email: z.email(),
    name: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
  }),
  retry: { maxAttempts: 5, baseDelayMs: 2_000 },
})

export const contracts = [welcomeEmailContract]
