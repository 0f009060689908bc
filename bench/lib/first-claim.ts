import type { ClaimParams } from '../../src/sql/claim.js'

/**
 * The claim a drain sends first, for one job of queue `default` (the cold-start benchmarks):
 * with the outbox relay when `relay` is given, as a drain does when its budget allows.
 */
export const firstClaim = (invocationId: string, relay?: number): ClaimParams => ({
  queues: ['default'],
  limit: 1,
  leaseMs: 60_000,
  invocationId,
  invocationPriority: 0,
  jobsDone: 0,
  subscribers: [],
  defer: [],
  ...(relay === undefined ? {} : { relay }),
})
