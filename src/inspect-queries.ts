/**
 * What the reads of `inspect` take: their query shapes, and the checks that turn a query into a
 * statement's filter (a bad one is a ValidationError before any statement).
 */

import { ValidationError } from './errors.js'
import type { DeadLetterFilter } from './sql/dead-letters.js'
import type { JobState } from './sql/jobs.js'

export interface DeadLetterQuery {
  ids?: string[]
  queue?: string
  name?: string
  /** At most this many per call. Default 100 for list, 1,000 for retry and discard. */
  limit?: number
  /** Ids below this one: paging for list, and for a retry by filter walking past kept ones. */
  before?: string
}

export interface JobsQuery {
  queue?: string
  name?: string
  state?: JobState
  /** At most this many, 1..1000. Default 100. */
  limit?: number
  /** Only jobs with ids above this one: the last id of the previous page. */
  after?: string
  /** Only jobs enqueued at or after this moment. */
  since?: Date
  /** Only jobs enqueued before this moment. */
  until?: Date
}

export interface BatchesQuery {
  /** At most this many, 1..1000. Default 50. */
  limit?: number
  /** Only batches with ids below this one: the last id of the previous page. */
  before?: string
}

export interface PartitionsQuery {
  /** At most this many partitions, 1..1000. Default 100. */
  limit?: number
  /** Skip this many (partitions come in key order). Default 0. */
  offset?: number
}

export interface StatsQuery {
  /** Default 1 h. */
  sinceMs?: number
  /** How many of the slowest job names to list, 1..1000. Default 10. */
  slowest?: number
  queue?: string
}

const MAX_BULK = 10_000

export function moment(what: string, value: Date | undefined): Date | null {
  if (value === undefined) return null
  if (!(value instanceof Date) || Number.isNaN(value.getTime()))
    throw new ValidationError(`jobs: ${what} must be a valid Date`)
  return value
}

export function deadLetterFilter(query: DeadLetterQuery | string, defaultLimit: number): DeadLetterFilter {
  const q = typeof query === 'string' ? { ids: [query] } : query
  if (q.ids?.some((id) => !/^[0-9]{1,19}$/.test(id)))
    throw new ValidationError('Dead letter ids are positive integers.')
  if (q.before !== undefined && !/^[0-9]{1,19}$/.test(q.before))
    throw new ValidationError('before is a dead letter id, a positive integer.')
  const limit = q.limit ?? defaultLimit
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_BULK)
    throw new ValidationError(`limit must be 1..${MAX_BULK}`)
  return {
    ...(q.ids ? { ids: q.ids } : {}),
    ...(q.queue ? { queue: q.queue } : {}),
    ...(q.name ? { name: q.name } : {}),
    limit,
  }
}
