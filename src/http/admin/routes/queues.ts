/** Queues: their depth and stored state; pause, resume, purge. */
import type { Sluice } from '../../../sluice.js'
import { type Operation, operation } from '../operation.js'
import * as s from '../schemas.js'
import { ADMIN, done, knownQueue, mutationRefused, notFound, ok, refused } from './common.js'

export function queueOperations(sluice: Sluice): Operation[] {
  const { inspect } = sluice
  return [
    operation({
      method: 'get',
      path: '/queues',
      summary: 'Every queue: depth and stored state (pause, breaker, lease)',
      tags: ['queues'],
      security: ADMIN,
      responses: { 200: { description: 'The queues', schema: s.queuesResponse }, ...refused },
      async handle() {
        const [queues, states] = await Promise.all([inspect.queues(), inspect.queueStates()])
        return { status: 200, body: { queues, states } }
      },
    }),
    ...(
      [
        ['pause', 'Pause a queue: drains skip it until resumed'],
        ['resume', 'Resume a queue and close its circuit breaker'],
      ] as const
    ).map(([verb, summary]) =>
      operation({
        method: 'post',
        path: `/queues/:name/${verb}`,
        summary,
        tags: ['queues'],
        mutation: true,
        security: ADMIN,
        params: s.queueParams,
        responses: { ...done, ...mutationRefused, ...notFound },
        async handle({ params }) {
          await sluice[verb](knownQueue(sluice, params.name))
          return ok
        },
      }),
    ),
    operation({
      method: 'post',
      path: '/queues/:name/purge',
      summary: "Delete a queue's waiting and blocked jobs (running jobs and jobs in a batch stay)",
      description: 'At most limit (default 10,000) per call: call again while purged equals it.',
      tags: ['queues'],
      mutation: true,
      security: ADMIN,
      params: s.queueParams,
      body: s.purgeBody,
      bodyExample: {},
      responses: {
        200: { description: 'How many were deleted', schema: s.purgeResponse },
        ...mutationRefused,
        ...notFound,
      },
      async handle({ params, body }) {
        const purged = await sluice.purgeQueue(
          knownQueue(sluice, params.name),
          body.limit === undefined ? {} : { limit: body.limit },
        )
        return { status: 200, body: { purged } }
      },
    }),
  ]
}
