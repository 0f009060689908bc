/** Recurring tasks: their schedule, a run now, their history. */
import type { Sluice } from '../../../sluice.js'
import { type Operation, operation } from '../operation.js'
import * as s from '../schemas.js'
import { ADMIN, mutationRefused, notFound, refused } from './common.js'

export function recurringOperations(sluice: Sluice): Operation[] {
  const { inspect } = sluice
  return [
    operation({
      method: 'get',
      path: '/recurring/tasks',
      summary: 'Every recurring task: cron, last and next slot, last run and its outcome',
      tags: ['status'],
      security: ADMIN,
      responses: { 200: { description: 'The tasks', schema: s.recurringTasksResponse }, ...refused },
      async handle() {
        return { status: 200, body: { tasks: await inspect.recurring() } }
      },
    }),
    operation({
      method: 'post',
      path: '/recurring/:task/trigger',
      summary: "Enqueue a recurring task's job now, once, outside its schedule (recorded as a manual run)",
      tags: ['status'],
      mutation: true,
      security: ADMIN,
      params: s.taskParams,
      responses: {
        200: { description: 'The job enqueued (id null when not: see status)', schema: s.triggerResponse },
        ...mutationRefused,
        ...notFound,
        409: {
          description: "The job's uniqueness key is held (unique onConflict: raise)",
          schema: s.errorBody,
        },
      },
      async handle({ params }) {
        return { status: 200, body: await sluice.triggerRecurring(params.task) }
      },
    }),
    operation({
      method: 'get',
      path: '/recurring',
      summary: 'Recent runs of recurring tasks, newest slot first',
      tags: ['status'],
      security: ADMIN,
      query: s.recurringQuery,
      responses: { 200: { description: 'The runs', schema: s.recurringResponse }, ...refused },
      async handle({ query }) {
        return { status: 200, body: { runs: await inspect.recurringRuns(query.task, query.limit ?? 100) } }
      },
    }),
  ]
}
