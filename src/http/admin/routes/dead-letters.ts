/** Dead letters: list, retry and discard by filter. */
import type { Sluice } from '../../../sluice.js'
import { type Operation, operation } from '../operation.js'
import * as s from '../schemas.js'
import { ADMIN, cursorOf, mutationRefused, refused } from './common.js'

export function deadLetterOperations(sluice: Sluice): Operation[] {
  const { inspect } = sluice
  return [
    operation({
      method: 'get',
      path: '/dead-letters',
      summary: 'Dead letters, newest first',
      tags: ['dead letters'],
      security: ADMIN,
      query: s.deadLettersQuery,
      responses: {
        200: { description: 'A page of dead letters', schema: s.deadLettersResponse },
        ...refused,
      },
      async handle({ query }) {
        const limit = query.limit ?? 100
        const deadLetters = await inspect.deadLetters({
          ...(query.queue === undefined ? {} : { queue: query.queue }),
          ...(query.name === undefined ? {} : { name: query.name }),
          ...(query.cursor === undefined ? {} : { before: query.cursor }),
          limit,
        })
        return { status: 200, body: { deadLetters, nextCursor: cursorOf(deadLetters, limit) } }
      },
    }),
    operation({
      method: 'post',
      path: '/dead-letters/retry',
      summary: 'Put the dead letters matching a filter back in their queue',
      description:
        'At most `limit` (default 1,000) per call, newest first. A dead letter whose unique key is held by ' +
        'another job, or whose concurrency key is full, stays a dead letter and is answered in `kept` with ' +
        'the reason. `ids` repeats `requeued`.',
      tags: ['dead letters'],
      mutation: true,
      security: ADMIN,
      body: s.deadLetterFilterBody,
      bodyExample: { queue: 'default', limit: 100 },
      responses: {
        200: { description: 'The dead letters requeued and those kept', schema: s.deadLetterRetryResponse },
        ...mutationRefused,
      },
      async handle({ body }) {
        const { requeued, kept } = await sluice.deadLetters.retry(body)
        return { status: 200, body: { requeued, kept, ids: requeued } }
      },
    }),
    operation({
      method: 'post',
      path: '/dead-letters/discard',
      summary: 'Delete the dead letters matching a filter',
      description: 'At most `limit` (default 1,000) per call; answers the ids it took.',
      tags: ['dead letters'],
      mutation: true,
      security: ADMIN,
      body: s.deadLetterFilterBody,
      bodyExample: { queue: 'default', limit: 100 },
      responses: { 200: { description: 'The ids taken', schema: s.idsResponse }, ...mutationRefused },
      async handle({ body }) {
        return { status: 200, body: { ids: await sluice.deadLetters.discard(body) } }
      },
    }),
  ]
}
