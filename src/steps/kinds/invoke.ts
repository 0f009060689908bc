/**
 * ctx.invoke: a child job enqueued with a link to this step, under the lease; the run suspends
 * until the child's settle records its result (or its failure) on the step.
 */
import { UnsupportedError } from '../../errors.js'
import type { AnyJob } from '../../jobs/define.js'
import { prepare, resolveJob } from '../../jobs/enqueue.js'
import type { InvokeTarget } from '../../jobs/steps.js'
import { isControlled, isDue } from '../../sql/enqueue.js'
import { invokeChild } from '../../sql/steps.js'
import { wakeSoon, wakesOnWrite } from '../../wake/send.js'
import { ChildJobFailedError, LeaseLostError } from '../errors.js'
import { park, track } from '../flight.js'
import { place, recordedStep } from '../records.js'
import type { StepState } from '../state.js'

export async function invokeStep(
  state: StepState,
  name: string,
  job: InvokeTarget,
  input: unknown,
): Promise<unknown> {
  const { seq, id } = place(state, name)
  const outcome = await track(state, async (): Promise<{ value: unknown } | { wait: true }> => {
    const stored = await recordedStep(state, seq, id, 'invoke')
    if (stored?.state === 'completed') return { value: stored.result }
    if (stored?.state === 'failed') throw new ChildJobFailedError(id, stored.child_id, stored.error)
    if (stored?.state === 'waiting') return { wait: true }
    const target = resolveJob(state.deps.jobs, job as AnyJob | string)
    const row = prepare(target, input, {}, state.deps.maxPayloadBytes)
    if (isControlled(row)) {
      throw new UnsupportedError(
        `ctx.invoke cannot enqueue job "${target.name}": it has a concurrency limit, a uniqueness key or an ` +
          'admission policy, which invoked children do not support yet. Enqueue it, and wait for an event it publishes.',
      )
    }
    // A child due now wakes its queue's drains, as an enqueue does: it may be served by other
    // drains than this one.
    const wake = state.deps.wake
    const debounceMs = wake && wakesOnWrite(wake) && isDue(row, Date.now()) ? wake.debounceMs : undefined
    const { rows } = await state.deps.db.query<{ child_id: string; wake?: boolean }>(
      invokeChild(
        state.deps.t,
        { jobId: state.job.id, token: state.job.token, seq, name: id },
        row,
        debounceMs,
      ),
    )
    if (rows.length === 0) throw new LeaseLostError(id)
    if (wake && rows[0]?.wake === true) wakeSoon(wake, row.queue)
    return { wait: true }
  })
  if ('value' in outcome) return outcome.value
  return park(state, null, true)
}
