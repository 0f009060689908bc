/**
 * A run suspending (step_suspend) while the wait it suspends for is resolved: a publish completes
 * the job's event wait, or a child ends. Two connections, each order forced with the job's row
 * lock: the resolving transaction holds the row when the suspend comes (the suspend must see what
 * it committed), or the suspend holds it when the publish comes (the publish must find the job
 * unleased). Either way the job is due now, not asleep until the wait's timeout.
 */
import { afterEach, beforeEach, expect, test } from 'vitest'
import { suspendJob } from '../../src/sql/steps.js'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await s.cleanup(context)
})

const INV = 'drn_suspend'

/** A leased job whose run recorded one open wait of `kind`, due to time out in an hour. */
async function waitingJob(kind: 'event' | 'invoke', child?: string): Promise<{ id: string; token: string }> {
  const job = await s.rows.leased(INV, { queue: 'q', name: 'flow' })
  await s.sql(
    `INSERT INTO $t.job_steps (job_id, seq, name, kind, state, wake_at, topic, regex, match, child_id)
     VALUES ($1, 0, 'wait', $2, 'waiting', now() + interval '1 hour', $3, NULL, $4::jsonb, $5::bigint)`,
    [
      job.id,
      kind,
      kind === 'event' ? 'payment.settled' : null,
      kind === 'event' ? '{"order": 1}' : null,
      child ?? null,
    ],
  )
  await s.sql('UPDATE $t.jobs SET waiting = 1 WHERE id = $1', [job.id])
  return { id: job.id, token: job.token! }
}

/**
 * Runs `resolve` in a transaction on one connection and, while it is open, the suspend on
 * another; the suspend's statement waits on the job's row, then the first commits.
 */
async function suspendWhileResolving(job: { id: string; token: string }, resolve: string, values: unknown[]) {
  const resolver = await s.pool.connect()
  const suspender = await s.pool.connect()
  try {
    await resolver.query('BEGIN')
    await resolver.query(resolve.replaceAll('$t', s.t), values)
    const pid = await s.pidOf(suspender)
    const suspended = s.run<{ run_at: Date; waiting: number }>(
      suspendJob(s.t, job.id, job.token, null),
      suspender,
    )
    await s.waitsOnLock(pid)
    await resolver.query('COMMIT')
    return await suspended
  } finally {
    resolver.release()
    suspender.release()
  }
}

/** The other order: the suspend's transaction is open when `resolve` comes, and waits on the row. */
async function resolveWhileSuspending(
  job: { id: string; token: string },
  resolve: string,
  values: unknown[],
) {
  const resolver = await s.pool.connect()
  const suspender = await s.pool.connect()
  try {
    await suspender.query('BEGIN')
    const [held] = await s.run<{ run_at: Date; waiting: number }>(
      suspendJob(s.t, job.id, job.token, null),
      suspender,
    )
    const pid = await s.pidOf(resolver)
    const resolved = resolver.query(resolve.replaceAll('$t', s.t), values)
    await s.waitsOnLock(pid)
    await suspender.query('COMMIT')
    await resolved
    return held
  } finally {
    resolver.release()
    suspender.release()
  }
}

const dueNow = async (id: string) =>
  (
    await s.sql<{ due: boolean; leased: boolean; waiting: number }>(
      `SELECT run_at <= now() AS due, lease_token IS NOT NULL AS leased, coalesce(waiting, 0) AS waiting
       FROM $t.jobs WHERE id = $1`,
      [id],
    )
  )[0]

test('a publish resolving the wait while the run suspends: the job is due now, not at the timeout', async () => {
  const job = await waitingJob('event')
  const [row] = await suspendWhileResolving(job, 'SELECT * FROM $t.publish_events($1::jsonb)', [
    JSON.stringify([{ event_id: 'evt_1', topic: 'payment.settled', payload: { order: 1 } }]),
  ])
  expect(row).toMatchObject({ waiting: 0 })
  expect(await dueNow(job.id)).toEqual({ due: true, leased: false, waiting: 0 })
  expect(await s.sql('SELECT state, result IS NOT NULL AS has FROM $t.job_steps')).toEqual([
    { state: 'completed', has: true },
  ])
})

test('a child ending while its parent suspends for it: the parent is due now, not at the timeout', async () => {
  const child = await s.rows.job({ queue: 'q', name: 'child' })
  const job = await waitingJob('invoke', child.id)
  const [row] = await suspendWhileResolving(job, 'SELECT $t.steps_children_ended($1::jsonb)', [
    JSON.stringify([{ child_id: Number(child.id), parent_id: Number(job.id), ok: true, result: { n: 1 } }]),
  ])
  expect(row).toMatchObject({ waiting: 0 })
  expect(await dueNow(job.id)).toEqual({ due: true, leased: false, waiting: 0 })
})

test('a publish coming while the run suspends: it waits for the suspend, then makes the job due now', async () => {
  const job = await waitingJob('event')
  const held = await resolveWhileSuspending(job, 'SELECT * FROM $t.publish_events($1::jsonb)', [
    JSON.stringify([{ event_id: 'evt_1', topic: 'payment.settled', payload: { order: 1 } }]),
  ])
  // The suspend saw the wait open: the job was due at its timeout until the publish.
  expect(held).toMatchObject({ waiting: 1 })
  expect(await dueNow(job.id)).toEqual({ due: true, leased: false, waiting: 0 })
})
