/** ctx.sleep and ctx.sleepUntil: the wake-up time recorded, then the run suspends until it. */

import { ValidationError } from '../../errors.js'
import type { Duration } from '../../jobs/steps.js'
import { park, track } from '../flight.js'
import { place, recordedStep, stepRecord, write } from '../records.js'
import type { StepState } from '../state.js'
import { durationMs } from '../values.js'

/** Sleeps for `duration` from now (checked before the step takes a position). */
export function sleepFor(state: StepState, name: string, duration: Duration): Promise<void> {
  return sleepStep(state, name, Date.now() + durationMs(duration, 'duration'))
}

/** Sleeps until `until` (checked before the step takes a position). */
export function sleepUntil(state: StepState, name: string, until: Date | string): Promise<void> {
  const at = new Date(until).getTime()
  if (!Number.isFinite(at)) {
    throw new ValidationError(`Invalid date for sleepUntil: ${String(until)}`, [
      { path: ['until'], message: 'must be a date' },
    ])
  }
  return sleepStep(state, name, at)
}

async function sleepStep(state: StepState, name: string, at: number): Promise<void> {
  const { seq, id } = place(state, name)
  const wake = await track(state, async () => {
    const stored = await recordedStep(state, seq, id, 'sleep')
    if (stored) return stored.wake_at?.getTime() ?? 0
    const now = new Date()
    await write(
      state,
      stepRecord(state, seq, id, {
        state: 'completed',
        result: null,
        error: null,
        startedAt: now,
        kind: 'sleep',
        wakeAt: new Date(at),
      }),
      id,
    )
    return at
  })
  if (wake > Date.now()) return park(state, wake, false)
}
