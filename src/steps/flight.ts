/**
 * The steps in flight: counted while they run, the run suspended once none is and one of them has
 * to wait, and closed when the run's time limit comes.
 */
import { LeaseLostError } from './errors.js'
import { type StepState, Suspension } from './state.js'

/** Counts a step in flight while `fn` runs: the run suspends only when none is. */
export async function track<T>(state: StepState, fn: () => Promise<T>): Promise<T> {
  if (state.closed) throw new LeaseLostError('a step after the time limit')
  state.inFlight++
  try {
    return await fn()
  } finally {
    state.inFlight--
    if (state.inFlight === 0) for (const done of state.idle.splice(0)) done()
    suspendWhenIdle(state)
  }
}

/** Runs `fn` as the run step running, which the deadline's message names. */
export async function asRunning<T>(state: StepState, id: string, fn: () => Promise<T>): Promise<T> {
  state.running = id
  try {
    return await fn()
  } finally {
    if (state.running === id) state.running = undefined
  }
}

/** Waits for ever: the run suspends, and the job resumes past this step in a later run. */
export function park(state: StepState, until: number | null, waits: boolean): Promise<never> {
  if (until !== null) state.until = Math.max(state.until ?? until, until)
  if (waits) state.waits = true
  state.parked = true
  suspendWhenIdle(state)
  return new Promise<never>(() => {})
}

function suspendWhenIdle(state: StepState): void {
  if (!state.parked || state.inFlight > 0 || state.fired) return
  // Steps called in the same tick (Promise.all) start before the run suspends.
  setImmediate(() => {
    if (state.inFlight > 0 || state.fired) return
    state.fired = true
    state.suspend(new Suspension(state.until, state.waits))
  })
}

/**
 * The run's time limit came, its signal aborted. Waits up to `graceMs` for the steps running to
 * finish and be recorded, then starts and records nothing more, and waits for the statements
 * already sent: whether a new step completed in this run is then settled. A step that ends
 * later is not recorded, and runs again in the next attempt.
 */
export async function closeSteps(state: StepState, graceMs: number): Promise<boolean> {
  if (state.inFlight > 0) {
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([
      new Promise<void>((done) => state.idle.push(done)),
      new Promise<void>((done) => {
        timer = setTimeout(done, graceMs)
      }),
    ])
    clearTimeout(timer)
  }
  state.closed = true
  await Promise.allSettled([...state.sending])
  return state.progressed
}
