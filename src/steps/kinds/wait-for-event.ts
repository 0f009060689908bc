/**
 * ctx.waitForEvent: a wait row for a topic pattern and a payload match, written under the lease;
 * the run suspends until a publish completes it or its timeout passes.
 */
import { ValidationError } from '../../errors.js'
import { assertPattern, patternRegex } from '../../events/topics.js'
import type { WaitedEvent, WaitForEventOptions } from '../../jobs/steps.js'
import { assertStorable } from '../../json.js'
import { waitForEvent, waitTimedOut } from '../../sql/steps.js'
import { LeaseLostError } from '../errors.js'
import { park, track } from '../flight.js'
import { place, recordedStep, send } from '../records.js'
import type { StepState } from '../state.js'
import { durationMs } from '../values.js'

export async function waitForEventStep(
  state: StepState,
  name: string,
  options: WaitForEventOptions,
): Promise<WaitedEvent | null> {
  const { seq, id } = place(state, name)
  if (typeof options !== 'object' || options === null) {
    throw new ValidationError('waitForEvent needs options: { topic, match?, timeout }', [
      { path: ['options'], message: 'is required' },
    ])
  }
  const pattern = assertPattern(options.topic)
  const match = options.match ?? {}
  if (typeof match !== 'object' || match === null || Array.isArray(match)) {
    throw new ValidationError('waitForEvent: match must be an object', [
      { path: ['match'], message: 'must be an object' },
    ])
  }
  assertStorable(match, 'match', 'waitForEvent')
  const timeoutMs = durationMs(options.timeout, 'timeout')
  const outcome = await track(state, async (): Promise<{ value: WaitedEvent | null } | { wait: true }> => {
    const stored = await recordedStep(state, seq, id, 'event')
    const db = state.deps.db
    if (stored?.state === 'completed') return { value: stored.result as WaitedEvent | null }
    if (stored?.state === 'waiting') {
      const at = stored.wake_at?.getTime() ?? null
      if (at === null || at > Date.now()) return { wait: true }
      const { rows } = await send(
        state,
        () =>
          db.query<{ state: string; result: unknown }>(
            waitTimedOut(state.deps.t, state.job.id, state.job.token, seq),
          ),
        (answer) => answer.rows.length > 0,
        id,
      )
      if (rows.length === 0) throw new LeaseLostError(id)
      return { value: rows[0]!.result as WaitedEvent | null }
    }
    const timeout = new Date(Date.now() + timeoutMs)
    const wildcard = pattern.split('.').some((word) => word === '*' || word === '#')
    const { rows } = await send(
      state,
      () =>
        db.query<{ state: string; result: unknown }>(
          waitForEvent(state.deps.t, {
            jobId: state.job.id,
            token: state.job.token,
            seq,
            name: id,
            topic: pattern,
            regex: wildcard ? patternRegex(pattern) : null,
            match: JSON.stringify(match),
            timeout,
          }),
        ),
      (answer) => answer.rows[0]?.state === 'completed',
      id,
    )
    if (rows.length === 0) throw new LeaseLostError(id)
    if (rows[0]!.state === 'completed') return { value: rows[0]!.result as WaitedEvent }
    return { wait: true }
  })
  if ('value' in outcome) return outcome.value
  return park(state, null, true)
}
