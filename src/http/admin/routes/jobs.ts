/** Jobs in the jobs table (list, detail, retry, run now, cancel, bulk) and batches. */
import { NotFoundError } from '../../../errors.js'
import { missingJob } from '../../../jobs/timeline.js'
import type { Sluice } from '../../../sluice.js'
import { type Operation, operation } from '../operation.js'
import * as s from '../schemas.js'
import { ADMIN, conflict, cursorOf, done, mutationRefused, notFound, ok, refused } from './common.js'

export function jobOperations(sluice: Sluice): Operation[] {
  const { inspect } = sluice
  return [
    operation({
      method: 'get',
      path: '/jobs',
      summary: 'Jobs waiting, scheduled, running or waiting for a retry, in id order',
      description: 'Keyset pagination: pass the nextCursor of a page as cursor for the next one.',
      tags: ['jobs'],
      security: ADMIN,
      query: s.jobsQuery,
      responses: { 200: { description: 'A page of jobs', schema: s.jobsResponse }, ...refused },
      async handle({ query }) {
        const limit = query.limit ?? 100
        const jobs = await inspect.jobs({
          ...(query.queue === undefined ? {} : { queue: query.queue }),
          ...(query.name === undefined ? {} : { name: query.name }),
          ...(query.state === undefined ? {} : { state: query.state }),
          ...(query.cursor === undefined ? {} : { after: query.cursor }),
          ...(query.since === undefined ? {} : { since: new Date(query.since) }),
          ...(query.until === undefined ? {} : { until: new Date(query.until) }),
          limit,
        })
        return { status: 200, body: { jobs, nextCursor: cursorOf(jobs, limit) } }
      },
    }),
    operation({
      method: 'get',
      path: '/jobs/:id',
      summary: 'One job, wherever it is (waiting, running, archived or dead), with its attempts',
      tags: ['jobs'],
      security: ADMIN,
      params: s.jobParams,
      responses: { 200: { description: 'The job', schema: s.jobResponse }, ...refused, ...notFound },
      async handle({ params }) {
        const job = await inspect.job(params.id)
        if (!job) throw new NotFoundError(missingJob(params.id))
        return { status: 200, body: job }
      },
    }),
    operation({
      method: 'post',
      path: '/jobs/:id/cancel',
      summary:
        'Delete a job that waits (not running, in no batch), with its steps; the waiting children it invoked are cancelled too unless children=keep',
      tags: ['jobs'],
      mutation: true,
      security: ADMIN,
      params: s.jobParams,
      query: s.cancelQuery,
      responses: { ...done, ...mutationRefused, ...notFound, ...conflict },
      async handle({ params, query }) {
        await sluice.cancelJob(params.id, query.children === undefined ? {} : { children: query.children })
        return ok
      },
    }),
    ...(
      [
        ['retry', 'Retry a job that failed and waits for its next attempt: due now', 'retryJob'],
        ['run-now', 'Make a waiting or scheduled job due now', 'runJobNow'],
      ] as const
    ).map(([verb, summary, control]) =>
      operation({
        method: 'post',
        path: `/jobs/:id/${verb}`,
        summary,
        tags: ['jobs'],
        mutation: true,
        security: ADMIN,
        params: s.jobParams,
        responses: { ...done, ...mutationRefused, ...notFound, ...conflict },
        async handle({ params }) {
          await sluice[control](params.id)
          return ok
        },
      }),
    ),
    ...(['retry', 'cancel'] as const).map((verb) =>
      operation({
        method: 'post',
        path: `/jobs/${verb}`,
        summary:
          verb === 'retry'
            ? 'Make the failed jobs matching a filter due now'
            : 'Delete the waiting jobs matching a filter (not running, in no batch)',
        description:
          'At least one of queue, name, state; at most `limit` (default 1,000) per call; answers the ids taken.',
        tags: ['jobs'],
        mutation: true,
        security: ADMIN,
        body: s.jobFilterBody,
        bodyExample: { queue: 'default', state: 'retrying', limit: 100 },
        responses: { 200: { description: 'The ids taken', schema: s.idsResponse }, ...mutationRefused },
        async handle({ body }) {
          const ids = verb === 'retry' ? await sluice.retryJobs(body) : await sluice.cancelJobs(body)
          return { status: 200, body: { ids } }
        },
      }),
    ),
    operation({
      method: 'get',
      path: '/batches/:id',
      summary: 'One batch: its counts and whether it finished',
      tags: ['status'],
      security: ADMIN,
      params: s.batchParams,
      responses: { 200: { description: 'The batch', schema: s.batchResponse }, ...refused, ...notFound },
      async handle({ params }) {
        const batch = await inspect.batch(params.id)
        if (!batch) throw new NotFoundError(`No batch ${params.id}.`)
        return { status: 200, body: batch }
      },
    }),
  ]
}
