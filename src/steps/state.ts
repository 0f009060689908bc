/**
 * What one run's steps share: what the drain gives them, the job they belong to, and the state
 * every step kind reads and changes (positions, the recorded steps, steps in flight, the
 * suspension under way, the statements sent). One object, passed to each kind's function.
 */
import type { Db } from '../db/types.js'
import type { AnyJob } from '../jobs/define.js'
import type { StepRow } from '../sql/steps.js'
import type { WakeOptions } from '../wake/send.js'

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

/** One run's steps, as every step kind sees them. */
export interface StepState {
  readonly deps: StepDeps
  readonly job: { readonly id: string; readonly token: string }
  /** Called once, when the run suspends. */
  readonly suspend: (suspension: Suspension) => void
  /** The next step's position. */
  next: number
  /** How many times each step name was called, for the occurrence index of a repeated name. */
  readonly seen: Map<string, number>
  /** The job's steps recorded by earlier runs, by position: loaded on first use. */
  recorded: Promise<Map<number, StepRow>> | undefined
  /** Steps in flight: the run suspends only when none is. */
  inFlight: number
  /** The end of the run's sleeps, epoch ms (null: none). */
  until: number | null
  /** A step waits for an event or a child. */
  waits: boolean
  /** A step has to wait: the run suspends once no step is in flight. */
  parked: boolean
  /** The suspension was sent. */
  fired: boolean
  /** A new step completed in this run: a stop at the deadline does not count an attempt. */
  progressed: boolean
  /** Statements sent that record this run's steps: close waits for them. */
  readonly sending: Set<Promise<unknown>>
  /** The run's time limit came (close): nothing more starts or is recorded. */
  closed: boolean
  /** Called when the last step in flight ends. */
  readonly idle: (() => void)[]
  /** The run step whose function is running, for the deadline's message. */
  running: string | undefined
}

/** The state of a run that has called no step yet. */
export function stepState(
  deps: StepDeps,
  job: { id: string; token: string },
  suspend: (suspension: Suspension) => void,
): StepState {
  return {
    deps,
    job,
    suspend,
    next: 0,
    seen: new Map(),
    recorded: undefined,
    inFlight: 0,
    until: null,
    waits: false,
    parked: false,
    fired: false,
    progressed: false,
    sending: new Set(),
    closed: false,
    idle: [],
    running: undefined,
  }
}
