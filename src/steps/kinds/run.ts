/** ctx.step: a function run once, its result recorded under the lease before the step returns. */
import { asRunning, track } from '../flight.js'
import { place, recordedStep, recordFailure, stepRecord, write } from '../records.js'
import type { StepState } from '../state.js'
import { storedResult } from '../values.js'

/**
 * A run step (ctx.step, ctx.step.transaction) at the next position, counted in flight: the result
 * an earlier run recorded there, or else what `body` returns.
 */
export async function runOnce<T>(
  state: StepState,
  name: string,
  body: (seq: number, id: string) => Promise<T>,
): Promise<T> {
  const { seq, id } = place(state, name)
  return track(state, async () => {
    const stored = await recordedStep(state, seq, id, 'run')
    if (stored?.state === 'completed') return stored.result as T
    return body(seq, id)
  })
}

export function runStep<T>(state: StepState, name: string, fn: () => Promise<T> | T): Promise<T> {
  return runOnce(state, name, async (seq, id) => {
    const startedAt = new Date()
    const value = await asRunning(state, id, async () => {
      try {
        return await fn()
      } catch (error) {
        await recordFailure(state, seq, id, error, startedAt)
        throw error
      }
    })
    const json = storedResult(value, `step "${id}"`)
    await write(
      state,
      stepRecord(state, seq, id, { state: 'completed', result: json, error: null, startedAt }),
      id,
      state.deps.db,
      true,
    )
    return JSON.parse(json) as T
  })
}
