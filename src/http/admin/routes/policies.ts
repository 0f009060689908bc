/** Admission policies and their partitions: list, pause, resume, cap. */
import type { Sluice } from '../../../sluice.js'
import { type Operation, operation } from '../operation.js'
import * as s from '../schemas.js'
import { ADMIN, done, mutationRefused, notFound, ok, refused } from './common.js'

export function policyOperations(sluice: Sluice): Operation[] {
  const { inspect } = sluice
  return [
    operation({
      method: 'get',
      path: '/policies',
      summary: 'Every admission policy',
      tags: ['admission'],
      security: ADMIN,
      responses: { 200: { description: 'The policies', schema: s.policiesResponse }, ...refused },
      async handle() {
        return { status: 200, body: { policies: await inspect.policies() } }
      },
    }),
    operation({
      method: 'get',
      path: '/policies/:policy/partitions',
      summary: "A page of a policy's partitions, with why each one's next job waits",
      tags: ['admission'],
      security: ADMIN,
      params: s.policyParams,
      query: s.partitionsQuery,
      responses: { 200: { description: 'The partitions', schema: s.partitionsResponse }, ...refused },
      async handle({ params, query }) {
        const partitions = await inspect.partitions(params.policy, {
          ...(query.limit === undefined ? {} : { limit: query.limit }),
          ...(query.offset === undefined ? {} : { offset: query.offset }),
        })
        return { status: 200, body: { partitions } }
      },
    }),
    ...(['pause', 'resume'] as const).map((verb) =>
      operation({
        method: 'post',
        path: `/policies/:policy/partitions/:partition/${verb}`,
        summary:
          verb === 'pause' ? 'Pause a partition: nothing of it is admitted' : "Lift a partition's pause",
        tags: ['admission'],
        mutation: true,
        security: ADMIN,
        params: s.partitionParams,
        responses: { ...done, ...mutationRefused, ...notFound },
        async handle({ params }) {
          if (verb === 'pause') await sluice.pausePartition(params.policy, params.partition)
          else await sluice.resumePartition(params.policy, params.partition)
          return ok
        },
      }),
    ),
    operation({
      method: 'put',
      path: '/policies/:policy/partitions/:partition/cap',
      summary: "Override a partition's cap on running jobs (null clears it)",
      tags: ['admission'],
      mutation: true,
      security: ADMIN,
      params: s.partitionParams,
      body: s.capBody,
      bodyExample: { cap: 2 },
      responses: { ...done, ...mutationRefused, ...notFound },
      async handle({ params, body }) {
        await sluice.setPartitionCap(params.policy, params.partition, body.cap)
        return ok
      },
    }),
  ]
}
