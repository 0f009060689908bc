/**
 * The operator's controls over many waiting jobs at once: bulk retry and cancel by filter, and a
 * queue's purge. Each is one statement; jobs a drain holds and jobs in a batch are left alone,
 * as the single-job controls leave them.
 */
import * as z from 'zod/mini'
import type { Db } from '../db/types.js'
import { toIssues, ValidationError } from '../errors.js'
import { nameSchema } from '../names.js'
import { type BulkJobFilter, cancelJobs, retryJobs } from '../sql/job-bulk.js'

/** At most this many jobs per call. */
export const MAX_BULK_JOBS = 10_000

export const BULK_STATES = ['waiting', 'scheduled', 'retrying', 'blocked'] as const

export const jobFilterSchema = z.lazy(() =>
  z
    .strictObject({
      queue: z.optional(nameSchema),
      name: z.optional(nameSchema),
      state: z.optional(z.enum(BULK_STATES)),
      limit: z.optional(z.int().check(z.minimum(1), z.maximum(MAX_BULK_JOBS))),
      /** Only jobs with a greater id: where a previous call stopped (its largest id). */
      after: z.optional(z.string().check(z.regex(/^[0-9]{1,19}$/, 'must be a job id'))),
    })
    .check(
      z.refine((f) => f.queue !== undefined || f.name !== undefined || f.state !== undefined, {
        message: 'must name at least one of queue, name, state (an empty filter would take every job)',
      }),
    ),
)

export type JobFilter = z.input<typeof jobFilterSchema>

export interface BulkJobControls {
  /**
   * Makes the jobs matching the filter that failed and wait for their retry due now, at most
   * `limit` (default 1,000); their ids.
   */
  retryJobs(filter: JobFilter): Promise<string[]>
  /**
   * Deletes the waiting jobs matching the filter (not running, in no batch) as cancelJob does,
   * at most `limit` (default 1,000); their ids.
   */
  cancelJobs(filter: JobFilter): Promise<string[]>
  /**
   * Deletes a queue's waiting and blocked jobs as cancelJob does, up to `limit` (default and
   * most 10,000) per call; running jobs and jobs in a batch stay. The count deleted: call again
   * while it equals the limit.
   */
  purgeQueue(queue: string, options?: { limit?: number }): Promise<number>
}

function parseFilter(filter: unknown, defaultLimit: number): BulkJobFilter {
  const parsed = jobFilterSchema.safeParse(filter)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const where = issue?.path.length ? ` at ${issue.path.join('.')}` : ''
    throw new ValidationError(`Invalid job filter${where}: ${issue?.message}`, toIssues(parsed.error.issues))
  }
  const f = parsed.data
  return {
    queue: f.queue ?? null,
    name: f.name ?? null,
    state: f.state ?? null,
    limit: f.limit ?? defaultLimit,
    after: f.after ?? null,
  }
}

export function bulkJobControls(db: () => Promise<Db>, t: string): BulkJobControls {
  const ids = async (statement: ReturnType<typeof cancelJobs>): Promise<string[]> =>
    (await (await db()).query<{ id: string }>(statement)).rows.map((r) => r.id)
  return {
    retryJobs: async (filter) => ids(retryJobs(t, parseFilter(filter, 1_000))),
    cancelJobs: async (filter) => ids(cancelJobs(t, parseFilter(filter, 1_000))),
    async purgeQueue(queue, options = {}) {
      const filter = parseFilter({ queue, limit: options.limit ?? MAX_BULK_JOBS }, MAX_BULK_JOBS)
      return (await ids(cancelJobs(t, filter))).length
    },
  }
}
