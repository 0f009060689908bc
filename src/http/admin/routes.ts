/** The admin API's operations: reads through `sluice.inspect`, writes through the Sluice's controls. */
import { NotFoundError, SluiceError } from '../../errors.js'
import type { Sluice } from '../../sluice.js'
import { type Operation, operation } from './operation.js'
import * as s from './schemas.js'

const ADMIN = ['bearer'] as const
const ok = { status: 200, body: { ok: true } }
const refused = {
  400: { description: 'Invalid input', schema: s.errorBody },
  401: { description: 'Missing or invalid credentials', schema: s.errorBody },
}
const mutationRefused = {
  ...refused,
  403: { description: 'The admin API is read-only (READ_ONLY)', schema: s.errorBody },
}
const notFound = { 404: { description: 'Not found', schema: s.errorBody } }
const conflict = {
  409: { description: 'The job is running (or not in a state for this)', schema: s.errorBody },
}
const done = { 200: { description: 'Done', schema: s.okBody } }

/** The page's last id when the page is full: where the next one starts. */
const cursorOf = (rows: readonly { id: string }[], limit: number): string | null =>
  rows.length === limit ? (rows[rows.length - 1]?.id ?? null) : null

export function adminOperations(sluice: Sluice): Operation[] {
  const { inspect } = sluice
  const knownQueue = (name: string): string => {
    if (!sluice.config.queues.includes(name))
      throw new SluiceError('UNKNOWN_QUEUE', `No job uses a queue named ${JSON.stringify(name)}.`)
    return name
  }
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
    operation({
      method: 'post',
      path: '/queues/:name/pause',
      summary: 'Pause a queue: drains skip it until resumed',
      tags: ['queues'],
      mutation: true,
      security: ADMIN,
      params: s.queueParams,
      responses: { ...done, ...mutationRefused, ...notFound },
      async handle({ params }) {
        await sluice.pause(knownQueue(params.name))
        return ok
      },
    }),
    operation({
      method: 'post',
      path: '/queues/:name/resume',
      summary: 'Resume a queue and close its circuit breaker',
      tags: ['queues'],
      mutation: true,
      security: ADMIN,
      params: s.queueParams,
      responses: { ...done, ...mutationRefused, ...notFound },
      async handle({ params }) {
        await sluice.resume(knownQueue(params.name))
        return ok
      },
    }),
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
      summary: 'One job, with its error history',
      tags: ['jobs'],
      security: ADMIN,
      params: s.jobParams,
      responses: { 200: { description: 'The job', schema: s.jobResponse }, ...refused, ...notFound },
      async handle({ params }) {
        const job = await inspect.job(params.id)
        if (!job) throw new NotFoundError(`No job ${params.id} in the jobs table.`)
        return { status: 200, body: job }
      },
    }),
    ...(
      [
        ['retry', 'Retry a job that failed and waits for its next attempt: due now', 'retryJob'],
        ['run-now', 'Make a waiting or scheduled job due now', 'runJobNow'],
        ['cancel', 'Delete a job that waits (not running, in no batch)', 'cancelJob'],
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
    ...(['retry', 'discard'] as const).map((verb) =>
      operation({
        method: 'post',
        path: `/dead-letters/${verb}`,
        summary:
          verb === 'retry'
            ? 'Put the dead letters matching a filter back in their queue'
            : 'Delete the dead letters matching a filter',
        description: 'At most `limit` (default 1,000) per call; answers the ids it took.',
        tags: ['dead letters'],
        mutation: true,
        security: ADMIN,
        body: s.deadLetterFilterBody,
        bodyExample: { queue: 'default', limit: 100 },
        responses: { 200: { description: 'The ids taken', schema: s.idsResponse }, ...mutationRefused },
        async handle({ body }) {
          const ids = await sluice.deadLetters[verb](body)
          return { status: 200, body: { ids } }
        },
      }),
    ),
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
      tags: ['status'],
      security: ADMIN,
      query: s.databaseQuery,
      responses: { 200: { description: 'The database', schema: s.databaseResponse }, ...refused },
      async handle({ query }) {
        const thresholds = {
          ...(query.xminAge === undefined ? {} : { xminAge: query.xminAge }),
          ...(query.heldMs === undefined ? {} : { heldMs: query.heldMs }),
        }
        return { status: 200, body: await inspect.database(thresholds) }
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
          knownQueue(params.name),
          body.limit === undefined ? {} : { limit: body.limit },
        )
        return { status: 200, body: { purged } }
      },
    }),
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
        503: { description: 'The database does not answer', schema: s.healthResponse },
      },
      async handle() {
        try {
          await inspect.health()
        } catch {
          return { status: 503, body: { ok: false, database: 'unreachable' } }
        }
        return { status: 200, body: { ok: true, database: 'ok' } }
      },
    }),
  ]
}
