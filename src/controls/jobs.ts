/**
 * The operator's controls over single jobs in the jobs table: make one due now (retry, run
 * now) or delete one that waits (cancel). A job a drain holds is left alone: CONFLICT.
 */
import type { Db, Statement } from '../db/types.js'
import { ConflictError, NotFoundError, ValidationError } from '../errors.js'
import { cancelJob, type JobOpRow, makeJobDue } from '../sql/jobs.js'

const JOB_ID = /^[1-9][0-9]{0,18}$/

/** A job id as given by the caller (a positive bigint as text), checked. */
export function parseJobId(value: unknown): string {
  if (typeof value !== 'string' || !JOB_ID.test(value) || BigInt(value) > 9223372036854775807n)
    throw new ValidationError(`Invalid job id ${JSON.stringify(value)}: must be a positive integer.`)
  return value
}

export interface JobControls {
  /** Makes a job that failed before and waits for its retry due now. */
  retryJob(id: string): Promise<void>
  /** Makes a waiting or scheduled job due now. */
  runJobNow(id: string): Promise<void>
  /**
   * Deletes a job that waits (not running, in no batch), with its uniqueness lock and its steps. A
   * job suspended on steps waits too: cancelling it also cancels the children its ctx.invoke
   * enqueued that still wait (`children: 'cancel'`, the default), or leaves them to run (`'keep'`).
   */
  cancelJob(id: string, options?: CancelOptions): Promise<void>
}

export interface CancelOptions {
  /** What happens to the waiting children a cancelled job invoked. Default `cancel`. */
  children?: 'cancel' | 'keep'
}

function outcome(row: JobOpRow | undefined, id: string, what: string): void {
  if (row?.done) return
  if (!row?.found)
    throw new NotFoundError(
      `No job ${id} in the jobs table (finished jobs are archived, failed ones dead-lettered).`,
    )
  if (row.leased) throw new ConflictError(`Job ${id} is running: cannot ${what} it.`)
  if (row.batchId !== null && what === 'cancel')
    throw new ConflictError(
      `Job ${id} belongs to batch ${row.batchId}: cancelling it would leave the batch unfinished.`,
    )
  if (row.attempts === 0 && what === 'retry')
    throw new ConflictError(`Job ${id} has not failed: nothing to retry (use run-now to make it due).`)
  throw new ConflictError(`Cannot ${what} job ${id}.`)
}

export function jobControls(db: () => Promise<Db>, t: string): JobControls {
  const run = async (id: string, what: string, statement: (id: string) => Statement): Promise<void> => {
    const checked = parseJobId(id)
    const { rows } = await (await db()).query<JobOpRow>(statement(checked))
    outcome(rows[0], checked, what)
  }
  return {
    retryJob: (id) => run(id, 'retry', (i) => makeJobDue(t, i, true)),
    runJobNow: (id) => run(id, 'run now', (i) => makeJobDue(t, i, false)),
    cancelJob: (id, options = {}) => {
      const children = options.children ?? 'cancel'
      if (children !== 'cancel' && children !== 'keep')
        throw new ValidationError(
          `Invalid children option ${JSON.stringify(children)}: must be "cancel" or "keep".`,
        )
      return run(id, 'cancel', (i) => cancelJob(t, i, children))
    },
  }
}
