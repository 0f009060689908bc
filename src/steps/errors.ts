import { SluiceError } from '../errors.js'

/** The most a step's or a job's result may weigh, as JSON text. */
export const MAX_RESULT_BYTES = 262_144

/**
 * A re-run of a job called its steps in another order than the run that recorded them: the
 * handler does not decide its steps the same way each time (it branches on the clock, on random
 * values, or on data read outside a step). Its attempt fails; fix the handler.
 */
export class NonDeterminismError extends SluiceError {
  constructor(
    readonly step: string,
    readonly position: number,
    recorded: { name: string; kind: string },
  ) {
    super(
      'NON_DETERMINISM',
      `Step "${step}" was called at position ${position}, where this job's recorded run called ` +
        `${recorded.kind} step "${recorded.name}": a job must call its steps in the same order on every run ` +
        '(decide with values from earlier steps, not from the clock, random numbers or reads outside a step).',
    )
  }
}

/** A step's write was refused: this run no longer holds the job's lease (another drain took it over). */
export class LeaseLostError extends SluiceError {
  constructor(readonly step: string) {
    super('LEASE_LOST', `Step "${step}" was not recorded: this run no longer holds the job's lease.`)
  }
}

/** A job that ctx.invoke enqueued ended without completing (dead-lettered or cancelled): its last error. */
export class ChildJobFailedError extends SluiceError {
  constructor(
    readonly step: string,
    readonly childId: string | null,
    readonly childError: { name?: string; message?: string; code?: string } | null,
  ) {
    super(
      'CHILD_FAILED',
      `Job ${childId ?? '?'} invoked by step "${step}" failed: ` +
        `${childError?.name ?? 'Error'}: ${childError?.message ?? 'no error recorded'}`,
    )
  }
}

/** A result larger than MAX_RESULT_BYTES: it fails its attempt for good (it would every time). */
export class ResultTooLargeError extends SluiceError {
  constructor(what: string, bytes: number) {
    super(
      'RESULT_TOO_LARGE',
      `The result of ${what} is ${bytes} bytes of JSON; results may be at most ${MAX_RESULT_BYTES} ` +
        '(store large values elsewhere and return a reference).',
    )
  }
}
