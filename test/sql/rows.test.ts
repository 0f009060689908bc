/**
 * The row factory seeds states the rest of Sluice recognises: checked through the builders that
 * read those states (metrics, maintenance, enqueue), so a seeder that drifts from the schema's
 * meaning fails here rather than making other tests pass for the wrong reason.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  type ControlledRow,
  enqueueControlled,
  type QueueMetrics,
  queueMetrics,
} from '../../src/sql/index.js'
import { buryExhausted, pruneArchive } from '../../src/sql/maintenance.js'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await s.cleanup(context)
})

describe('row factory', () => {
  it('seeds ready, scheduled, leased, dead-lettered and blocked jobs that metrics count as such', async () => {
    await s.rows.ready({ queue: 'q' })
    await s.rows.failed(2, { queue: 'q', dueInMs: -1 })
    await s.rows.scheduled({ queue: 'q' })
    await s.rows.leased('inv-a', { queue: 'q' })
    await s.rows.deadLetter({ queue: 'q' })
    await s.rows.blockedByLimit('acct:1', { queue: 'q' })
    await s.rows.inPausedQueue('paused')
    await s.rows.behindOpenBreaker('tripped')
    const rows = await s.run<QueueMetrics>(queueMetrics(s.t, []))
    const byQueue = Object.fromEntries(rows.map((r) => [r.queue, r]))
    expect(byQueue.q).toMatchObject({
      ready: 2,
      delayed: 1,
      inFlight: 1,
      deadLettered: 1,
      blocked: 1,
      paused: false,
    })
    expect(byQueue.paused).toMatchObject({ ready: 1, paused: true })
    expect(byQueue.tripped?.breakerUntil).toBeInstanceOf(Date)
  })

  it('seeds an exhausted job that maintenance dead-letters', async () => {
    const job = await s.rows.exhausted({ maxAttempts: 2 })
    const [row] = await s.run<{ n: number }>(buryExhausted(s.t, 10))
    expect(row?.n).toBe(1)
    expect(await s.sql('SELECT id::text, attempts FROM $t.dead_letters')).toEqual([
      { id: job.id, attempts: 2 },
    ])
  })

  it('seeds archived jobs that retention prunes', async () => {
    await s.rows.archived()
    await s.rows.archived({ status: 'expired' })
    const [row] = await s.run<{ n: number }>(pruneArchive(s.t, 0, 10))
    expect(row?.n).toBe(2)
  })

  it('seeds an until-executed lock that a second enqueue of the key runs into', async () => {
    const held = await s.rows.uniqueQueued('order:1')
    const [row] = await s.run<ControlledRow>(
      enqueueControlled(s.t, [
        {
          queue: 'default',
          name: 'work',
          payload: '{}',
          priority: 16384,
          maxAttempts: 5,
          runAt: null,
          delayMs: 0,
          unique: { key: 'order:1', strategy: 'until-executed', onConflict: 'discard', ttlMs: 60_000 },
        },
      ]),
    )
    expect(row).toMatchObject({ status: 'duplicate', existing_id: held.id })
  })

  it('seeds a batch whose total counts its jobs', async () => {
    const { batchId, jobs } = await s.rows.inBatch(3)
    expect(jobs).toHaveLength(3)
    expect(await s.sql('SELECT count(*)::int AS n FROM $t.jobs WHERE batch_id = $1', [batchId])).toEqual([
      { n: 3 },
    ])
    expect(await s.sql('SELECT total, sealed FROM $t.batches')).toEqual([{ total: 3, sealed: false }])
  })
})
