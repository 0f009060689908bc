import * as z from 'zod/mini'
import { drainOptionsObject } from '../drain/options.js'

/** The body of POST /drain: the drain options a caller may set. */
export const drainBodySchema = z.lazy(() =>
  z.extend(
    z.pick(drainOptionsObject(), { queues: true, budgetMs: true, maxJobs: true, concurrency: true }),
    // Set by wake-ups: makes every signed request unique, so that parallel wake-ups are not replays.
    { wakeId: z.optional(z.string().check(z.maxLength(100))) },
  ),
)

/** The body of POST /maintain: empty, or a JSON object of its options, of which it has none yet. */
export const maintainBodySchema = z.lazy(() => z.strictObject({}))
