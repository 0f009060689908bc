import { SluiceError } from '../errors.js'
import type { JobContext } from '../jobs/define.js'
import type { StepFunction, Steps } from '../jobs/steps.js'
import type { ClaimedRow } from '../sql/index.js'
import { StepRun } from '../steps/run.js'
import type { StepDeps, Suspension } from '../steps/state.js'

/** What a run's context keeps: under a symbol, so that a context made from it (Object.create) shares it. */
const STATE = Symbol('sluice.run')

interface RunState {
  controller: AbortController | undefined
  /** Why the signal fired, once it did. */
  reason: unknown
  steps: StepRun | undefined
  api: Steps | undefined
  readonly deps: StepDeps | undefined
  readonly row: ClaimedRow
  readonly suspend: (suspension: Suspension) => void
}

/**
 * A job's context (JobContext) for one run. Its signal and its steps are made on first use, by
 * getters of the class: a handler that reads neither pays for neither, and the steps' functions are
 * made once per run that calls one, not for every run. A context that extends it (a subscriber's, made with Object.create) reads the same state.
 */
export class RunContext implements JobContext {
  readonly id: string
  readonly name: string
  readonly queue: string
  readonly attempt: number
  readonly maxAttempts: number
  readonly enqueuedAt: Date
  readonly deadline: Date
  declare readonly [STATE]: RunState

  constructor(row: ClaimedRow, deadline: Date, deps: StepDeps | undefined, suspend: (s: Suspension) => void) {
    this.id = row.id
    this.name = row.name
    this.queue = row.queue
    this.attempt = row.attempts
    this.maxAttempts = row.max_attempts
    this.enqueuedAt = row.enqueued_at
    this.deadline = deadline
    Object.defineProperty(this, STATE, {
      value: {
        controller: undefined,
        reason: undefined,
        steps: undefined,
        api: undefined,
        deps,
        row,
        suspend,
      },
    })
  }

  get signal(): AbortSignal {
    const s = this[STATE]
    if (!s.controller) {
      s.controller = new AbortController()
      if (s.reason !== undefined) s.controller.abort(s.reason)
    }
    return s.controller.signal
  }

  get step(): StepFunction {
    return api(this[STATE]).step
  }

  get sleep(): Steps['sleep'] {
    return api(this[STATE]).sleep
  }

  get sleepUntil(): Steps['sleepUntil'] {
    return api(this[STATE]).sleepUntil
  }

  get waitForEvent(): Steps['waitForEvent'] {
    return api(this[STATE]).waitForEvent
  }

  get invoke(): Steps['invoke'] {
    return api(this[STATE]).invoke
  }
}

/** Fires the run's signal (its time limit ran out). */
export function abortRun(context: RunContext, reason: unknown): void {
  const s = context[STATE]
  s.reason = reason
  s.controller?.abort(reason)
}

/** The run's steps, if it called one. */
export const runSteps = (context: RunContext): StepRun | undefined => context[STATE].steps

function api(s: RunState): Steps {
  if (s.api) return s.api
  if (!s.deps)
    throw new SluiceError('UNSUPPORTED', 'Steps need a drain: this run has no database to record them.')
  s.steps = new StepRun(s.deps, s.row, s.suspend)
  s.api = s.steps.api()
  return s.api
}
