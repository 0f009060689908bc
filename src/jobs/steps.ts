import type { Queryable } from '../db/types.js'

/** A duration: milliseconds, or a number with a unit (`"500ms"`, `"30s"`, `"5m"`, `"2h"`, `"7d"`). */
export type Duration = number | `${number}${'ms' | 's' | 'm' | 'h' | 'd'}`

export interface WaitForEventOptions {
  /** A topic pattern, as subscribers take: `*` matches one word, `#` zero or more. */
  topic: string
  /** The event's payload must contain this JSON (as PostgreSQL's `@>`): `{ orderId: 42 }`. Default `{}`: any. */
  match?: Record<string, unknown>
  /** How long to wait; the wait then resolves with null. */
  timeout: Duration
}

/** The event a wait resolves with: the envelope subscribers get. */
export interface WaitedEvent<P = unknown> {
  topic: string
  eventId: string
  payload: P
  headers: Record<string, string>
  publishedAt: string
}

/** The steps API of a job's context (docs/steps.md). */
export interface Steps {
  /**
   * Runs `fn` once and stores its result (as JSON): a re-run of the job (a retry, a resume after a
   * sleep or a wait, a run taken over after a crash) gets the stored result without running `fn`.
   * At least once: a crash between `fn`'s effect and its record runs it again.
   */
  step: StepFunction
  /** Suspends the job for `duration`: it is settled as sleeping, and resumes past this step. */
  sleep(name: string, duration: Duration): Promise<void>
  /** Suspends the job until `until`. */
  sleepUntil(name: string, until: Date | string): Promise<void>
  /**
   * Suspends the job until an event on `topic` whose payload contains `match` is published (the
   * event is returned), or until the timeout (null is returned).
   */
  waitForEvent<P = unknown>(name: string, options: WaitForEventOptions): Promise<WaitedEvent<P> | null>
  /**
   * Enqueues `job` with `input` as a child of this job and suspends until it ends: returns its
   * result, or throws ChildJobFailedError once it is dead-lettered or cancelled.
   */
  invoke(name: string, job: InvokeTarget, input: unknown): Promise<unknown>
}

export interface StepFunction {
  <T>(name: string, fn: () => Promise<T> | T): Promise<T>
  /**
   * Runs `fn` in a transaction that also records the step: its database effects and its record
   * commit together or not at all, so it is exactly once. Needs interactive transactions (pg,
   * Neon Pool, PGlite).
   */
  transaction<T>(name: string, fn: (tx: Queryable) => Promise<T>): Promise<T>
}

/** The job ctx.invoke enqueues: a job definition, its contract, or its name. */
export type InvokeTarget = string | { readonly kind: 'job' | 'contract'; readonly name: string }
