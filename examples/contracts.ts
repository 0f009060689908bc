/**
 * Job contracts: what enqueueing needs (name, queue, input schema, priority, attempts,
 * uniqueness), without handlers. The edge function imports this file only, so no handler
 * code reaches it; jobs.ts defines each job from its contract.
 */
import * as z from 'zod'
import { defineContract } from '../src/edge.js'

/** Greets a user who just signed up. */
export const welcomeEmailContract = defineContract({
  name: 'welcome-email',
  queue: 'emails',
  input: z.object({
    userId: z.string().min(1).max(100),
    email: z.email(),
    name: z.string().min(1).max(100).optional(),
  }),
  retry: { maxAttempts: 5, baseDelayMs: 2_000 },
})

export const contracts = [welcomeEmailContract]
