/**
 * ctx.step.transaction: a run step whose function's writes and the step's record commit in one
 * transaction, behind the job's lease (exactly once).
 */
import type { Queryable } from '../../db/types.js'
import { UnsupportedError } from '../../errors.js'
import { holdLease } from '../../sql/steps.js'
import { LeaseLostError } from '../errors.js'
import { asRunning } from '../flight.js'
import { recordFailure, send, stepRecord, write } from '../records.js'
import type { StepState } from '../state.js'
import { storedResult } from '../values.js'
import { runOnce } from './run.js'

export function transactionStep<T>(
  state: StepState,
  name: string,
  fn: (tx: Queryable) => Promise<T>,
): Promise<T> {
  return runOnce(state, name, async (seq, id) => {
    const db = state.deps.db
    if (!db.interactiveTransactions) {
      throw new UnsupportedError(
        'ctx.step.transaction needs interactive transactions (pg, Neon Pool, PGlite); use ctx.step on Neon HTTP.',
      )
    }
    const startedAt = new Date()
    const json = await asRunning(state, id, async () => {
      try {
        return await send(
          state,
          () =>
            db.transaction(async (tx) => {
              // The job's row first: a run that lost its lease rolls back before fn writes anything.
              const held = await tx.query(holdLease(state.deps.t, state.job.id, state.job.token))
              if (held.rows.length === 0) throw new LeaseLostError(id)
              const value = await fn(tx)
              const text = storedResult(value, `step "${id}"`)
              await write(
                state,
                stepRecord(state, seq, id, { state: 'completed', result: text, error: null, startedAt }),
                id,
                tx,
              )
              return text
            }),
          () => true,
          id,
        )
      } catch (error) {
        if (!(error instanceof LeaseLostError)) await recordFailure(state, seq, id, error, startedAt)
        throw error
      }
    })
    return JSON.parse(json) as T
  })
}
