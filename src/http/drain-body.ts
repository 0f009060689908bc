import * as z from 'zod'
import { drainOptionsSchema } from '../drain/options.js'

/** The body of POST /drain: the drain options a caller may set. */
export const drainBodySchema = drainOptionsSchema
  .pick({ queues: true, budgetMs: true, maxJobs: true, concurrency: true })
  // Set by wake-ups: makes every signed request unique, so that parallel wake-ups are not replays.
  .extend({ wakeId: z.string().max(100).optional() })
