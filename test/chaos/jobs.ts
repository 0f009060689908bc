/**
 * The jobs the fault suite runs: near no-ops that say when they start and end. The suite
 * enqueues them; the drain workers (worker.ts) run them and write what they did to a file.
 */
import { z } from 'zod'
import { defineJob, defineSubscriber } from '../../src/index.js'

/** Where a handler writes its start and end (a file per worker process, synchronously). */
export interface RunRecorder {
  /** `deadline`: when the handler's signal fires (the job's timeout or the drain's deadline). */
  start(id: string, attempt: number, deadline: number): void
  /** `how`: `ok` when the handler returned, else the name of what it threw. */
  end(id: string, attempt: number, how: string): void
  /** A plain step's effect happened (ctx.step: at least once, never after the step's record). */
  effect(id: string, step: string): void
}

export const silent: RunRecorder = { start() {}, end() {}, effect() {} }

/**
 * The queue of the ledger jobs: single-consumer in the database (the suite's maintenance syncs it),
 * while the drains' own config does not say so, as when another deployment made it so: their
 * claims alone tell them, and they keep claims in flight together.
 */
export const LEDGER_QUEUE = 'chaos-ledger'

/** Topic of the events whose effect must happen exactly once. */
export const EFFECT_TOPIC = 'chaos.effect'
/** Table (in the suite's schema) where the subscriber writes its effect, inside ctx.transaction. */
export const EFFECTS_TABLE = 'chaos_effects'
/** Table where the step jobs write their transactional steps' effects, inside ctx.step.transaction. */
export const STEP_EFFECTS_TABLE = 'chaos_step_effects'
/** The steps of a step job, in order: plain ones (ctx.step) and transactional ones. */
export const CHAOS_STEPS = ['plain-0', 'tx-0', 'plain-1', 'tx-1'] as const

/**
 * Enough attempts that only a defect dead-letters a job: each fault that catches a job
 * claimed (running, or claimed ahead) costs it one attempt.
 */
const retry = { maxAttempts: 25, baseDelayMs: 50, maxDelayMs: 500 }
/** Well inside a worker drain's budget, so every drain can start every job. */
const timeout = 1_000

const input = z.object({ n: z.number().int(), ms: z.number().int().min(0).max(50), key: z.number().int() })
export type ChaosInput = z.infer<typeof input>

const pause = (ms: number): Promise<void> | undefined =>
  ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : undefined

async function recorded(
  recorder: RunRecorder,
  ctx: { id: string; attempt: number; deadline: Date },
  body: () => Promise<void> | undefined,
): Promise<void> {
  recorder.start(ctx.id, ctx.attempt, ctx.deadline.getTime())
  try {
    await body()
  } catch (error) {
    recorder.end(ctx.id, ctx.attempt, error instanceof Error ? error.name : 'thrown')
    throw error
  }
  recorder.end(ctx.id, ctx.attempt, 'ok')
}

export function chaosJobs(recorder: RunRecorder, schema: string) {
  /** Most of the work: nothing, or a few milliseconds of waiting. */
  const plain = defineJob({
    name: 'chaos-plain',
    input,
    retry,
    timeout,
    run: (job, ctx) => recorded(recorder, ctx, () => pause(job.ms)),
  })
  /** One job of a key runs at a time across all drains: exercises the claim-time locks. */
  const keyed = defineJob({
    name: 'chaos-keyed',
    input,
    retry,
    timeout,
    unique: { key: (job) => `key:${job.key}`, strategy: 'while-executing' },
    run: (job, ctx) => recorded(recorder, ctx, () => pause(job.ms)),
  })
  /** At most 3 of a key queued or running: exercises the semaphores and the blocked store. */
  const limited = defineJob({
    name: 'chaos-limited',
    input,
    retry,
    timeout,
    concurrency: { limit: 3, key: (job) => `limit:${job.key}` },
    run: (job, ctx) => recorded(recorder, ctx, () => pause(job.ms)),
  })
  /**
   * One at a time, in enqueue order, across all drains and every fault (a single-consumer queue).
   * Each takes at least 10 ms, so that the suite can kill the queue's holder in the middle of one.
   */
  const ledger = defineJob({
    name: 'chaos-ledger',
    queue: LEDGER_QUEUE,
    input,
    retry,
    timeout,
    run: (job, ctx) => recorded(recorder, ctx, () => pause(10 + job.ms)),
  })
  /** An effect that must happen once per event: written with the processed mark. */
  const effect = defineSubscriber({
    name: 'chaos-effect',
    topic: EFFECT_TOPIC,
    input: z.object({ n: z.number().int() }),
    retry,
    timeout,
    run: (event, ctx) =>
      recorded(recorder, ctx, async () => {
        await ctx.transaction((tx) =>
          tx.query({
            text: `INSERT INTO "${schema}".${EFFECTS_TABLE} (event_id, n, pid, attempt) VALUES ($1, $2, $3, $4)`,
            values: [ctx.event.id, event.n, process.pid, ctx.attempt],
          }),
        )
      }),
  })
  /** Durable steps (docs/steps.md): plain steps report their effect, transactional ones write it. */
  const steps = defineJob({
    name: 'chaos-steps',
    input,
    retry,
    timeout,
    run: (job, ctx) =>
      recorded(recorder, ctx, async () => {
        for (const step of CHAOS_STEPS) {
          if (step.startsWith('plain')) {
            await ctx.step(step, async () => {
              recorder.effect(ctx.id, step)
              await pause(job.ms)
              return step
            })
          } else {
            await ctx.step.transaction(step, (tx) =>
              tx.query({
                text: `INSERT INTO "${schema}".${STEP_EFFECTS_TABLE} (job_id, step, pid) VALUES ($1, $2, $3)`,
                values: [ctx.id, step, process.pid],
              }),
            )
          }
        }
      }),
  })
  return {
    plain,
    keyed,
    limited,
    steps,
    ledger,
    effect,
    jobs: [plain, keyed, limited, steps, ledger],
    subscribers: [effect],
  }
}

/** Settings every Sluice of the suite shares (workers and the suite's own maintenance). */
export const chaosOptions = {
  // A fault-induced failure must not pause the queue for 30 s: the breaker is not under test.
  circuitBreaker: false as const,
  // Short intervals, so that overlapping maintenance calls really contend for the tasks.
  maintenance: { intervalMs: 200 },
}
