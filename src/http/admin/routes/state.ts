/** Sluice's state at a glance: overview, locks, database health, events, drains, stats, health. */
import type { Sluice } from '../../../sluice.js'
import { unhealthy } from '../../errors.js'
import { type Operation, operation } from '../operation.js'
import * as s from '../schemas.js'
import { ADMIN, refused } from './common.js'

export function stateOperations(sluice: Sluice, showSessionQueries: boolean): Operation[] {
  const { inspect } = sluice
  return [
    operation({
      method: 'get',
      path: '/overview',
      summary:
        'Per queue depth and oldest ready job, throughput over the last hour, dead letters, live drains',
      description: 'One statement; on a large jobs table the state counts are estimated (estimated: true).',
      tags: ['status'],
      security: ADMIN,
      responses: { 200: { description: 'The overview', schema: s.overviewResponse }, ...refused },
      async handle() {
        return { status: 200, body: await inspect.overview() }
      },
    }),
    operation({
      method: 'get',
      path: '/locks',
      summary:
        'Uniqueness locks, concurrency semaphores (holders, blocked jobs) and single-consumer queue leases',
      tags: ['status'],
      security: ADMIN,
      responses: { 200: { description: 'The locks', schema: s.locksResponse }, ...refused },
      async handle() {
        return { status: 200, body: await inspect.locks() }
      },
    }),
    operation({
      method: 'get',
      path: '/database',
      summary:
        "Sluice's tables (tuples, bloat, size, autovacuum) and what holds the xmin horizon, with a warning",
      description:
        "Tuple counts are PostgreSQL's estimates (pg_stat_user_tables). Other sessions' SQL text (`query`) is null unless the app is created with `showSessionQueries: true`.",
      tags: ['status'],
      security: ADMIN,
      query: s.databaseQuery,
      responses: { 200: { description: 'The database', schema: s.databaseResponse }, ...refused },
      async handle({ query }) {
        const thresholds = {
          ...(query.xminAge === undefined ? {} : { xminAge: query.xminAge }),
          ...(query.heldMs === undefined ? {} : { heldMs: query.heldMs }),
        }
        return { status: 200, body: await inspect.database(thresholds, { queries: showSessionQueries }) }
      },
    }),
    operation({
      method: 'get',
      path: '/events',
      summary:
        "Subscribers (deliveries over the last hour, processed marks, last delivery) and the outbox's backlog",
      tags: ['status'],
      security: ADMIN,
      responses: { 200: { description: 'Subscribers and outbox', schema: s.eventsResponse }, ...refused },
      async handle() {
        return { status: 200, body: await inspect.events() }
      },
    }),
    operation({
      method: 'get',
      path: '/invocations',
      summary: 'The drains running now',
      tags: ['status'],
      security: ADMIN,
      responses: { 200: { description: 'The drains', schema: s.invocationsResponse }, ...refused },
      async handle() {
        return { status: 200, body: { invocations: await inspect.invocations() } }
      },
    }),
    operation({
      method: 'get',
      path: '/stats',
      summary: 'Finished attempts over a window: summary, throughput, slowest names',
      tags: ['status'],
      security: ADMIN,
      query: s.statsQuery,
      responses: { 200: { description: 'The figures', schema: s.statsResponse }, ...refused },
      async handle({ query }) {
        const stats = await inspect.stats({
          ...(query.queue === undefined ? {} : { queue: query.queue }),
          ...(query.sinceMs === undefined ? {} : { sinceMs: query.sinceMs }),
          ...(query.slowest === undefined ? {} : { slowest: query.slowest }),
        })
        return { status: 200, body: stats }
      },
    }),
    operation({
      method: 'get',
      path: '/health',
      summary: 'Whether the database answers',
      tags: ['status'],
      security: ADMIN,
      responses: {
        200: { description: 'The database answers', schema: s.healthResponse },
        401: refused[401],
        503: {
          description: 'The database does not answer, or its schema needs `sluice migrate`',
          schema: s.healthResponse,
        },
      },
      async handle() {
        try {
          await inspect.health()
        } catch (error) {
          return { status: 503, body: unhealthy(error) }
        }
        return { status: 200, body: { ok: true, database: 'ok' } }
      },
    }),
  ]
}
