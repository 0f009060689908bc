/**
 * Job contracts: what enqueueing needs (name, queue, input schema, priority, attempts),
 * without handlers. The edge function imports this file only, so no handler code reaches it.
 */
import * as z from 'zod'
import { defineContract } from '../src/edge.js'

export const welcomeEmailContract = defineContract({
  name: 'welcome-email',
  queue: 'emails',
  input: z.object({ userId: z.string().min(1), email: z.email() }),
  retry: { maxAttempts: 5, baseDelayMs: 2_000 },
})

export const contracts = [welcomeEmailContract]
