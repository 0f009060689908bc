import type { StepFunction, Steps } from '../jobs/steps.js'
import { closeSteps } from './flight.js'
import { invokeStep } from './kinds/invoke.js'
import { runStep } from './kinds/run.js'
import { sleepFor, sleepUntil } from './kinds/sleep.js'
import { transactionStep } from './kinds/transaction.js'
import { waitForEventStep } from './kinds/wait-for-event.js'
import { type StepDeps, type StepState, type Suspension, stepState } from './state.js'

/**
 * One run's steps: positions given in call order, the job's recorded steps loaded on first use,
 * each new result written under the lease before the step returns, and the run suspended once
 * every step in flight has settled and one of them has to wait. Each kind of step is a module of
 * kinds/, over the run's StepState.
 */
export class StepRun {
  private readonly state: StepState
  private made: Steps | undefined

  constructor(deps: StepDeps, job: { id: string; token: string }, suspend: (suspension: Suspension) => void) {
    this.state = stepState(deps, job, suspend)
  }

  /** A new step completed in this run: a stop at the deadline does not count an attempt. */
  get progressed(): boolean {
    return this.state.progressed
  }

  /** The run step whose function is running, for the deadline's message. */
  get running(): string | undefined {
    return this.state.running
  }

  /** The steps API over this run. */
  api(): Steps {
    this.made ??= this.make()
    return this.made
  }

  private make(): Steps {
    const state = this.state
    const step = (<T>(name: string, fn: () => Promise<T> | T) => runStep(state, name, fn)) as StepFunction
    step.transaction = (name, fn) => transactionStep(state, name, fn)
    return {
      step,
      sleep: (name, duration) => sleepFor(state, name, duration),
      sleepUntil: (name, until) => sleepUntil(state, name, until),
      waitForEvent: (name, options) => waitForEventStep(state, name, options) as never,
      invoke: (name, job, input) => invokeStep(state, name, job, input),
    }
  }

  /**
   * The run's time limit came, its signal aborted: waits up to `graceMs` for the steps running,
   * then records nothing more. Whether a new step completed in this run (closeSteps).
   */
  close(graceMs: number): Promise<boolean> {
    return closeSteps(this.state, graceMs)
  }
}
