/** Admission policies and their partitions: list, pause, resume, cap. */
import type { Sluice } from '../../../sluice.js'
import { type Operation, operation } from '../operation.js'
import * as s from '../schemas.js'
import { ADMIN, done, mutationRefused, notFound, ok, refused } from './common.js'

/** What every partition action declares: a mutation of the admission tag, 404 for an unknown partition. */
const partitionAction = {
  tags: ['admission'],
  mutation: true,
  security: ADMIN,
  responses: { ...done, ...mutationRefused, ...notFound },
}

const BY_BODY =
  'The partition key travels in the body, so that every key ("", ".", "..", "a/b") is addressable.'

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
    ...(['pause', 'resume'] as const).flatMap((verb) => {
      const summary =
        verb === 'pause' ? 'Pause a partition: nothing of it is admitted' : "Lift a partition's pause"
      const act = (policy: string, partition: string) =>
        verb === 'pause'
          ? sluice.pausePartition(policy, partition)
          : sluice.resumePartition(policy, partition)
      return [
        operation({
          method: 'post',
          path: `/policies/:policy/partitions/${verb}`,
          summary,
          description: BY_BODY,
          ...partitionAction,
          params: s.policyParams,
          body: s.partitionBody,
          bodyExample: { partition: 'a' },
          async handle({ params, body }) {
            await act(params.policy, body.partition)
            return ok
          },
        }),
        operation({
          method: 'post',
          path: `/policies/:policy/partitions/:partition/${verb}`,
          summary: `${summary} (the key as a path segment)`,
          description: `A key that is not a path segment ("", ".", "..", or one with "/") goes in the body of POST /policies/{policy}/partitions/${verb}.`,
          ...partitionAction,
          params: s.partitionParams,
          async handle({ params }) {
            await act(params.policy, params.partition)
            return ok
          },
        }),
      ]
    }),
    operation({
      method: 'put',
      path: '/policies/:policy/partitions/cap',
      summary: "Override a partition's cap on running jobs (null clears it)",
      description: BY_BODY,
      ...partitionAction,
      params: s.policyParams,
      body: s.partitionCapBody,
      bodyExample: { partition: 'a', cap: 2 },
      async handle({ params, body }) {
        await sluice.setPartitionCap(params.policy, body.partition, body.cap)
        return ok
      },
    }),
    operation({
      method: 'put',
      path: '/policies/:policy/partitions/:partition/cap',
      summary: "Override a partition's cap on running jobs (the key as a path segment)",
      description:
        'A key that is not a path segment ("", ".", "..", or one with "/") goes in the body of PUT /policies/{policy}/partitions/cap.',
      ...partitionAction,
      params: s.partitionParams,
      body: s.capBody,
      bodyExample: { cap: 2 },
      async handle({ params, body }) {
        await sluice.setPartitionCap(params.policy, params.partition, body.cap)
        return ok
      },
    }),
  ]
}
