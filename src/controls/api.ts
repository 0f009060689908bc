import * as z from 'zod/mini'
import { sqlStateOf } from '../db/errors.js'
import { SQLSTATE } from '../db/sqlstate.js'
import type { Db, Statement } from '../db/types.js'
import { ConflictError, NotFoundError, toIssues, ValidationError } from '../errors.js'
import type { AnyJob } from '../jobs/define.js'
import { prepare, resolveJob } from '../jobs/enqueue.js'
import { assertStorable } from '../json.js'
import { assertName } from '../names.js'
import { setPartitionCap, setPartitionPaused } from '../sql/admission.js'
import { createBatch, sealBatch } from '../sql/batches.js'
import { pauseQueue, resumeQueue, syncQueues } from '../sql/queues.js'
import { triggerRecurringRun } from '../sql/recurring.js'
import { type BatchCallbacks, callbackRows } from './batches.js'
import { type BulkJobControls, bulkJobControls } from './bulk.js'
import { type JobControls, jobControls } from './jobs.js'
import { parsePartitionCap, parsePartitionRef } from './partitions.js'
import type { QueueSettings } from './queues.js'
import type { RecurringTask } from './recurring.js'

export interface BatchOptions extends BatchCallbacks {
  /** Given to every callback as its input; checked against each callback job's input schema. */
  properties?: unknown
}

/** A recurring task's job enqueued by hand: its id (null when not enqueued), how it went, and when. */
export interface TriggeredRun {
  id: string | null
  status: string
  slot: Date
}

export interface ControlsApi extends JobControls, BulkJobControls {
  /**
   * Enqueues a recurring task's job now, once, outside its schedule (the schedule goes on as
   * before), recorded in the task's history as a manual run. NOT_FOUND for a task not defined.
   */
  triggerRecurring(task: string): Promise<TriggeredRun>
  /**
   * Pauses a queue by hand: drains skip it until resume(), whatever the circuit breaker does. A
   * queue no job of this app uses is paused all the same (for the jobs another app enqueues into
   * it); the CLI refuses one without `--force`, the admin API with 404 `UNKNOWN_QUEUE`.
   */
  pause(queue: string): Promise<void>
  /**
   * Lifts a manual pause and closes the queue's circuit breaker. False when the database has no
   * row for the queue (never paused, and not synced by migrate() or maintenance).
   */
  resume(queue: string): Promise<boolean>
  /**
   * Pauses a partition of an admission policy: drains admit none of its jobs until
   * resumePartition(), across deploys and enqueues; jobs already running finish. Throws
   * NOT_FOUND for a partition that was never enqueued into.
   */
  pausePartition(policy: string, partition: string): Promise<void>
  /** Lifts a partition's pause (a handler's slow-down and the throttle still apply). NOT_FOUND when unknown. */
  resumePartition(policy: string, partition: string): Promise<void>
  /**
   * Caps a partition's running jobs by hand (0: admit nothing), over its concurrency and
   * adaptive cap, until cleared with null. NOT_FOUND when the partition is unknown.
   */
  setPartitionCap(policy: string, partition: string, cap: number | null): Promise<void>
  /** Writes the queues' settings from code (also done by migrate() and by maintenance). */
  syncQueues(): Promise<void>
  createBatch(options?: BatchOptions): Promise<{ id: string }>
  /** No more jobs join the batch; a batch already done finishes (and fires its callbacks) now. */
  sealBatch(id: string): Promise<{ total: number; finished: boolean }>
  /** Creates a batch, lets `fill` enqueue into it (`{ batch: id }`), then seals it. */
  batch(
    options: BatchOptions,
    fill: (id: string) => Promise<void>,
  ): Promise<{ id: string; total: number; finished: boolean }>
}

const batchId = z.string().check(z.regex(/^[0-9]{1,19}$/, 'must be a batch id'))

/** A batch id as given by the caller, checked. */
export function parseBatchId(value: string): string {
  const parsed = batchId.safeParse(value)
  if (!parsed.success) throw new ValidationError(`Invalid batch id ${JSON.stringify(value)}`)
  return parsed.data
}

/** What the controls need of the resolved config (src/config.ts, a layer above, passes all of it). */
export interface ControlsConfig {
  readonly jobs: ReadonlyMap<string, AnyJob>
  readonly queueSettings: readonly QueueSettings[]
  readonly recurring: readonly RecurringTask[]
  readonly maxPayloadBytes: number
}

export function controlsApi(db: () => Promise<Db>, t: string, config: ControlsConfig): ControlsApi {
  const callbackJob = (job: AnyJob | undefined, key: string, properties: unknown): void => {
    if (!job) return
    resolveJob(config.jobs, job)
    const parsed = z.safeParse(job.input, properties)
    if (!parsed.success) {
      throw new ValidationError(
        `Batch properties do not fit the input of ${key} job "${job.name}": ${parsed.error.issues[0]?.message}`,
        toIssues(parsed.error.issues),
      )
    }
  }
  /** Checks the partition's names, writes, and throws NOT_FOUND when no row was written. */
  const onPartition = async (
    policy: unknown,
    partition: unknown,
    write: (ref: { policy: string; partition: string }) => Statement,
  ): Promise<void> => {
    const ref = parsePartitionRef(policy, partition)
    const { rows } = await (await db()).query(write(ref))
    if (rows.length === 0) {
      throw new NotFoundError(
        `No partition ${JSON.stringify(ref.partition)} of admission policy ${JSON.stringify(ref.policy)}.`,
        { hint: 'A partition exists once a job was enqueued into it; see inspect.partitions(policy).' },
      )
    }
  }
  const api: ControlsApi = {
    ...jobControls(db, t),
    ...bulkJobControls(db, t),
    async triggerRecurring(task) {
      const name = assertName('job', task)
      const defined = config.recurring.find((r) => r.name === name)
      if (!defined) throw new NotFoundError(`No recurring task named ${JSON.stringify(name)}.`)
      const row = prepare(defined.job, defined.input, {}, config.maxPayloadBytes)
      try {
        const { rows } = await (await db()).query<TriggeredRun>(triggerRecurringRun(t, name, row))
        return rows[0]!
      } catch (error) {
        // The job's uniqueness key is held and its policy is to raise: nothing was written.
        if (sqlStateOf(error) === SQLSTATE.SLUICE_CONFLICT) throw new ConflictError((error as Error).message)
        throw error
      }
    },
    async pause(queue) {
      await (await db()).query(pauseQueue(t, assertName('queue', queue)))
    },
    async resume(queue) {
      const { rows } = await (await db()).query(resumeQueue(t, assertName('queue', queue)))
      return rows.length > 0
    },
    async pausePartition(policy, partition) {
      await onPartition(policy, partition, (r) => setPartitionPaused(t, r.policy, r.partition, true))
    },
    async resumePartition(policy, partition) {
      await onPartition(policy, partition, (r) => setPartitionPaused(t, r.policy, r.partition, false))
    },
    async setPartitionCap(policy, partition, cap) {
      const checked = parsePartitionCap(cap)
      await onPartition(policy, partition, (r) => setPartitionCap(t, r.policy, r.partition, checked))
    },
    async syncQueues() {
      await (await db()).query(syncQueues(t, config.queueSettings))
    },
    async createBatch(options = {}) {
      const properties = options.properties ?? {}
      assertStorable(properties, 'properties', 'Invalid batch properties', ['properties'])
      callbackJob(options.onFinish, 'onFinish', properties)
      callbackJob(options.onSuccess, 'onSuccess', properties)
      callbackJob(options.onDiscard, 'onDiscard', properties)
      const { rows } = await (await db()).query<{ id: string }>(
        createBatch(t, callbackRows(options), properties),
      )
      return { id: rows[0]!.id }
    },
    async sealBatch(batch) {
      try {
        const { rows } = await (await db()).query<{ total: number; finished: boolean }>(
          sealBatch(t, parseBatchId(batch)),
        )
        return rows[0]!
      } catch (error) {
        if (sqlStateOf(error) === SQLSTATE.SLUICE_INVALID) throw new ValidationError((error as Error).message)
        throw error
      }
    },
    async batch(options, fill) {
      const { id: created } = await api.createBatch(options)
      await fill(created)
      return { id: created, ...(await api.sealBatch(created)) }
    },
  }
  return api
}
