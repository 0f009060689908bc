/**
 * A run's steps as recorded: the position each call takes, the record an earlier run left there,
 * and the statements that write new records under the job's lease.
 */
import type { Queryable, Statement } from '../db/types.js'
import { describeError } from '../errors.js'
import { jobSteps, recordStep, type StepRecord, type StepRow } from '../sql/steps.js'
import { LeaseLostError, NonDeterminismError } from './errors.js'
import type { StepState } from './state.js'
import { checkName } from './values.js'

/** The next position, and the step's name with its occurrence index when the name came before. */
export function place(state: StepState, name: unknown): { seq: number; id: string } {
  const base = checkName(name)
  const n = state.seen.get(base) ?? 0
  state.seen.set(base, n + 1)
  return { seq: state.next++, id: n === 0 ? base : `${base}:${n}` }
}

/** The step recorded at `seq` by an earlier run, checked against this call. */
export async function recordedStep(
  state: StepState,
  seq: number,
  id: string,
  kind: StepRow['kind'],
): Promise<StepRow | undefined> {
  state.recorded ??= state.deps.db
    .query<StepRow>(jobSteps(state.deps.t, state.job.id))
    .then(({ rows }) => new Map(rows.map((row) => [row.seq, row])))
  const row = (await state.recorded).get(seq)
  if (row && (row.name !== id || row.kind !== kind)) throw new NonDeterminismError(id, seq + 1, row)
  return row
}

/**
 * Sends a statement that records a step, unless the run is closed; `progress` says whether its
 * answer records a new completed step (then known by close, which waits for what was sent).
 */
export function send<T>(
  state: StepState,
  statement: () => Promise<T>,
  progress: (answer: T) => boolean,
  id: string,
): Promise<T> {
  if (state.closed) return Promise.reject(new LeaseLostError(id))
  const sent = statement().then((answer) => {
    if (progress(answer)) state.progressed = true
    return answer
  })
  state.sending.add(sent)
  const forget = () => state.sending.delete(sent)
  sent.then(forget, forget)
  return sent
}

/** Sends a step's record (a step_record statement); a refusal means the lease was lost. */
export async function write(
  state: StepState,
  statement: Statement,
  id: string,
  on: Queryable = state.deps.db,
  progress = false,
): Promise<void> {
  const { rows } = await send(
    state,
    () => on.query<{ recorded: boolean }>(statement),
    (answer) => progress && answer.rows[0]?.recorded === true,
    id,
  )
  if (rows[0]?.recorded !== true) throw new LeaseLostError(id)
}

/** The step_record statement for the step at `seq`, under this run's lease; a run step unless `fields` says. */
export function stepRecord(
  state: StepState,
  seq: number,
  id: string,
  fields: Pick<StepRecord, 'state' | 'result' | 'error' | 'startedAt'> &
    Partial<Pick<StepRecord, 'kind' | 'wakeAt'>>,
): Statement {
  return recordStep(state.deps.t, {
    jobId: state.job.id,
    token: state.job.token,
    seq,
    name: id,
    kind: 'run',
    wakeAt: null,
    ...fields,
  })
}

/** Records a run step's failure, best effort: it shows on the job's page; the attempt fails either way. */
export async function recordFailure(
  state: StepState,
  seq: number,
  id: string,
  error: unknown,
  startedAt: Date,
): Promise<void> {
  await state.deps.db
    .query(
      stepRecord(state, seq, id, { state: 'failed', result: null, error: describeError(error), startedAt }),
    )
    .catch(() => undefined)
}
