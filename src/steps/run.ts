import type { Db, Queryable, Statement } from '../db/types.js'
import { describeError, UnsupportedError, ValidationError } from '../errors.js'
import { assertPattern, patternRegex } from '../events/topics.js'
import type { AnyJob } from '../jobs/define.js'
import { prepare, resolveJob } from '../jobs/enqueue.js'
import type { InvokeTarget, StepFunction, Steps, WaitedEvent, WaitForEventOptions } from '../jobs/steps.js'
import { assertStorable } from '../json.js'
import { isControlled, isDue } from '../sql/enqueue.js'
import {
  holdLease,
  invokeChild,
  jobSteps,
  recordStep,
  type StepRow,
  waitForEvent as waitForEventSql,
  waitTimedOut,
} from '../sql/steps.js'
import { type WakeOptions, wakeSoon, wakesOnWrite } from '../wake/send.js'
import { ChildJobFailedError, LeaseLostError, NonDeterminismError } from './errors.js'
import { checkName, durationMs, storedResult } from './values.js'

/** What a drain gives its jobs' steps. */
export interface StepDeps {
  db: Db
  t: string
  jobs: ReadonlyMap<string, AnyJob>
  maxPayloadBytes: number
  /** Wakes an invoked child's queue, as an enqueue does; absent, nobody is woken. */
  wake?: Readonly<WakeOptions>
}

/** Thrown into a run that suspends: the drain settles the job as suspended, not as failed. */
export class Suspension {
  constructor(
    /** The end of its sleeps, epoch ms (null: none). */
    readonly until: number | null,
    /** It has open waits (event waits, children): step_suspend reads their timeouts. */
    readonly waits: boolean,
  ) {}
}

/**
 * One run's steps: positions given in call order, the job's recorded steps loaded on first use,
 * each new result written under the lease before the step returns, and the run suspended once
 * every step in flight has settled and one of them has to wait.
 */
export class StepRun {
  private next = 0
  private readonly seen = new Map<string, number>()
  private recorded: Promise<Map<number, StepRow>> | undefined
  private inFlight = 0
  private until: number | null = null
  private waits = false
  private parked = false
  private fired = false
  /** A new step completed in this run: a stop at the deadline does not count an attempt. */
  progressed = false
  /** Statements sent that record this run's steps: close() waits for them. */
  private readonly sending = new Set<Promise<unknown>>()
  /** The run's time limit came (close): nothing more starts or is recorded. */
  private closed = false
  private readonly idle: (() => void)[] = []
  /** The run step whose function is running, for the deadline's message. */
  running: string | undefined

  constructor(
    private readonly deps: StepDeps,
    private readonly job: { id: string; token: string },
    private readonly suspend: (suspension: Suspension) => void,
  ) {}

  private made: Steps | undefined

  /** The steps API over this run. */
  api(): Steps {
    this.made ??= this.make()
    return this.made
  }

  private make(): Steps {
    const step = (<T>(name: string, fn: () => Promise<T> | T) => this.run(name, fn)) as StepFunction
    step.transaction = (name, fn) => this.transaction(name, fn)
    return {
      step,
      sleep: (name, duration) => this.sleep(name, Date.now() + durationMs(duration, 'duration')),
      sleepUntil: (name, until) => {
        const at = new Date(until).getTime()
        if (!Number.isFinite(at)) {
          throw new ValidationError(`Invalid date for sleepUntil: ${String(until)}`, [
            { path: ['until'], message: 'must be a date' },
          ])
        }
        return this.sleep(name, at)
      },
      waitForEvent: (name, options) => this.waitForEvent(name, options) as never,
      invoke: (name, job, input) => this.invoke(name, job, input),
    }
  }

  /** The next position, and the step's name with its occurrence index when the name came before. */
  private place(name: unknown): { seq: number; id: string } {
    const base = checkName(name)
    const n = this.seen.get(base) ?? 0
    this.seen.set(base, n + 1)
    return { seq: this.next++, id: n === 0 ? base : `${base}:${n}` }
  }

  /** The step recorded at `seq` by an earlier run, checked against this call. */
  private async stored(seq: number, id: string, kind: StepRow['kind']): Promise<StepRow | undefined> {
    this.recorded ??= this.deps.db
      .query<StepRow>(jobSteps(this.deps.t, this.job.id))
      .then(({ rows }) => new Map(rows.map((row) => [row.seq, row])))
    const row = (await this.recorded).get(seq)
    if (row && (row.name !== id || row.kind !== kind)) throw new NonDeterminismError(id, seq + 1, row)
    return row
  }

  /** Counts a step in flight while `fn` runs: the run suspends only when none is. */
  private async track<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed) throw new LeaseLostError('a step after the time limit')
    this.inFlight++
    try {
      return await fn()
    } finally {
      this.inFlight--
      if (this.inFlight === 0) for (const done of this.idle.splice(0)) done()
      this.check()
    }
  }

  /**
   * Sends a statement that records a step, unless the run is closed; `progress` says whether its
   * answer records a new completed step (then known by close(), which waits for what was sent).
   */
  private send<T>(statement: () => Promise<T>, progress: (answer: T) => boolean, id: string): Promise<T> {
    if (this.closed) return Promise.reject(new LeaseLostError(id))
    const sent = statement().then((answer) => {
      if (progress(answer)) this.progressed = true
      return answer
    })
    this.sending.add(sent)
    const forget = () => this.sending.delete(sent)
    sent.then(forget, forget)
    return sent
  }

  /**
   * The run's time limit came, its signal aborted. Waits up to `graceMs` for the steps running to
   * finish and be recorded, then starts and records nothing more, and waits for the statements
   * already sent: whether a new step completed in this run is then settled. A step that ends
   * later is not recorded, and runs again in the next attempt.
   */
  async close(graceMs: number): Promise<boolean> {
    if (this.inFlight > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([
        new Promise<void>((done) => this.idle.push(done)),
        new Promise<void>((done) => {
          timer = setTimeout(done, graceMs)
        }),
      ])
      clearTimeout(timer)
    }
    this.closed = true
    await Promise.allSettled([...this.sending])
    return this.progressed
  }

  /** Waits for ever: the run suspends, and the job resumes past this step in a later run. */
  private park(until: number | null, waits: boolean): Promise<never> {
    if (until !== null) this.until = Math.max(this.until ?? until, until)
    if (waits) this.waits = true
    this.parked = true
    this.check()
    return new Promise<never>(() => {})
  }

  private check(): void {
    if (!this.parked || this.inFlight > 0 || this.fired) return
    // Steps called in the same tick (Promise.all) start before the run suspends.
    setImmediate(() => {
      if (this.inFlight > 0 || this.fired) return
      this.fired = true
      this.suspend(new Suspension(this.until, this.waits))
    })
  }

  private async write(
    statement: Statement,
    id: string,
    on: Queryable = this.deps.db,
    progress = false,
  ): Promise<void> {
    const { rows } = await this.send(
      () => on.query<{ recorded: boolean }>(statement),
      (answer) => progress && answer.rows[0]?.recorded === true,
      id,
    )
    if (rows[0]?.recorded !== true) throw new LeaseLostError(id)
  }

  private async run<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
    const { seq, id } = this.place(name)
    return this.track(async () => {
      const stored = await this.stored(seq, id, 'run')
      if (stored?.state === 'completed') return stored.result as T
      const startedAt = new Date()
      let value: T
      this.running = id
      try {
        value = await fn()
      } catch (error) {
        // Best effort: the step's failure shows on the job's page; the attempt fails either way.
        await this.deps.db
          .query(
            recordStep(this.deps.t, this.record(seq, id, 'failed', null, describeError(error), startedAt)),
          )
          .catch(() => undefined)
        throw error
      } finally {
        if (this.running === id) this.running = undefined
      }
      const json = storedResult(value, `step "${id}"`)
      await this.write(
        recordStep(this.deps.t, this.record(seq, id, 'completed', json, null, startedAt)),
        id,
        this.deps.db,
        true,
      )
      return JSON.parse(json) as T
    })
  }

  private record(
    seq: number,
    id: string,
    state: 'completed' | 'failed',
    result: string | null,
    error: { name: string; message: string; code?: string } | null,
    startedAt: Date,
    kind: 'run' | 'sleep' = 'run',
    wakeAt: Date | null = null,
  ) {
    return {
      jobId: this.job.id,
      token: this.job.token,
      seq,
      name: id,
      kind,
      state,
      result,
      error,
      startedAt,
      wakeAt,
    }
  }

  private async transaction<T>(name: string, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const { seq, id } = this.place(name)
    return this.track(async () => {
      const stored = await this.stored(seq, id, 'run')
      if (stored?.state === 'completed') return stored.result as T
      const db = this.deps.db
      if (!db.interactiveTransactions) {
        throw new UnsupportedError(
          'ctx.step.transaction needs interactive transactions (pg, Neon Pool, PGlite); use ctx.step on Neon HTTP.',
        )
      }
      const startedAt = new Date()
      this.running = id
      let json: string
      try {
        json = await this.send(
          () =>
            db.transaction(async (tx) => {
              // The job's row first: a run that lost its lease rolls back before fn writes anything.
              const held = await tx.query(holdLease(this.deps.t, this.job.id, this.job.token))
              if (held.rows.length === 0) throw new LeaseLostError(id)
              const value = await fn(tx)
              const text = storedResult(value, `step "${id}"`)
              await this.write(
                recordStep(this.deps.t, this.record(seq, id, 'completed', text, null, startedAt)),
                id,
                tx,
              )
              return text
            }),
          () => true,
          id,
        )
      } catch (error) {
        if (!(error instanceof LeaseLostError)) {
          await db
            .query(
              recordStep(this.deps.t, this.record(seq, id, 'failed', null, describeError(error), startedAt)),
            )
            .catch(() => undefined)
        }
        throw error
      } finally {
        if (this.running === id) this.running = undefined
      }
      return JSON.parse(json) as T
    })
  }

  private async sleep(name: string, at: number): Promise<void> {
    const { seq, id } = this.place(name)
    const wake = await this.track(async () => {
      const stored = await this.stored(seq, id, 'sleep')
      if (stored) return stored.wake_at?.getTime() ?? 0
      const now = new Date()
      await this.write(
        recordStep(this.deps.t, this.record(seq, id, 'completed', null, null, now, 'sleep', new Date(at))),
        id,
      )
      return at
    })
    if (wake > Date.now()) return this.park(wake, false)
  }

  private async waitForEvent(name: string, options: WaitForEventOptions): Promise<WaitedEvent | null> {
    const { seq, id } = this.place(name)
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
    const outcome = await this.track(async (): Promise<{ value: WaitedEvent | null } | { wait: true }> => {
      const stored = await this.stored(seq, id, 'event')
      const db = this.deps.db
      if (stored?.state === 'completed') return { value: stored.result as WaitedEvent | null }
      if (stored?.state === 'waiting') {
        const at = stored.wake_at?.getTime() ?? null
        if (at === null || at > Date.now()) return { wait: true }
        const { rows } = await this.send(
          () =>
            db.query<{ state: string; result: unknown }>(
              waitTimedOut(this.deps.t, this.job.id, this.job.token, seq),
            ),
          (answer) => answer.rows.length > 0,
          id,
        )
        if (rows.length === 0) throw new LeaseLostError(id)
        return { value: rows[0]!.result as WaitedEvent | null }
      }
      const timeout = new Date(Date.now() + timeoutMs)
      const wildcard = pattern.split('.').some((word) => word === '*' || word === '#')
      const { rows } = await this.send(
        () =>
          db.query<{ state: string; result: unknown }>(
            waitForEventSql(this.deps.t, {
              jobId: this.job.id,
              token: this.job.token,
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
    return this.park(null, true)
  }

  private async invoke(name: string, job: InvokeTarget, input: unknown): Promise<unknown> {
    const { seq, id } = this.place(name)
    const outcome = await this.track(async (): Promise<{ value: unknown } | { wait: true }> => {
      const stored = await this.stored(seq, id, 'invoke')
      if (stored?.state === 'completed') return { value: stored.result }
      if (stored?.state === 'failed') throw new ChildJobFailedError(id, stored.child_id, stored.error)
      if (stored?.state === 'waiting') return { wait: true }
      const target = resolveJob(this.deps.jobs, job as AnyJob | string)
      const row = prepare(target, input, {}, this.deps.maxPayloadBytes)
      if (isControlled(row)) {
        throw new UnsupportedError(
          `ctx.invoke cannot enqueue job "${target.name}": it has a concurrency limit, a uniqueness key or an ` +
            'admission policy, which invoked children do not support yet. Enqueue it, and wait for an event it publishes.',
        )
      }
      // A child due now wakes its queue's drains, as an enqueue does: it may be served by other
      // drains than this one.
      const wake = this.deps.wake
      const debounceMs = wake && wakesOnWrite(wake) && isDue(row, Date.now()) ? wake.debounceMs : undefined
      const { rows } = await this.deps.db.query<{ child_id: string; wake?: boolean }>(
        invokeChild(
          this.deps.t,
          { jobId: this.job.id, token: this.job.token, seq, name: id },
          row,
          debounceMs,
        ),
      )
      if (rows.length === 0) throw new LeaseLostError(id)
      if (wake && rows[0]?.wake === true) wakeSoon(wake, row.queue)
      return { wait: true }
    })
    if ('value' in outcome) return outcome.value
    return this.park(null, true)
  }
}
