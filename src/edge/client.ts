import { neon } from '@neondatabase/serverless'
import * as z from 'zod/mini'
import { fromNeonHttp } from '../db/neon-http.js'
import type { Db } from '../db/types.js'
import { ConfigError, toIssues, ValidationError } from '../errors.js'
import { type PublishOptions, type PublishResult, preparePublish, publishAndWake } from '../events/publish.js'
import { type AnyContract, isContract } from '../jobs/contract.js'
import type { JobInput, JobShape } from '../jobs/define.js'
import { type EnqueueOptions, type EnqueueResult, prepare, prepareMany, resolveJob } from '../jobs/enqueue.js'
import { quoteSchema, schemaNameSchema } from '../names.js'
import { ONCE } from '../validate.js'
import { resolveWake, type WakeInput } from '../wake/config.js'
import { enqueueAndWake } from '../wake/enqueue.js'

export interface EdgeClientOptions {
  /** A `postgres://` URL (opened with Neon's HTTP driver) or a Sluice adapter such as `fromNeonHttp(neon(url))`. */
  database: string | Db
  /** The contracts (defineContract) of the jobs this client enqueues. */
  jobs: readonly AnyContract[]
  /** Schema holding Sluice's tables. Default `sluice`, or SLUICE_SCHEMA. */
  schema?: string
  /** Largest accepted job payload, bytes of JSON. Default 256 KiB. */
  maxPayloadBytes?: number
  /** Wake-ups after enqueue, as on createSluice (SLUICE_DRAIN_URL, SLUICE_SECRET); pass `waitUntil` on edge runtimes. */
  wake?: WakeInput
  /** Where SLUICE_SCHEMA, SLUICE_DRAIN_URL and SLUICE_SECRET come from. Default `process.env` where the runtime has one. */
  env?: Record<string, string | undefined>
}

/** Enqueue options on the edge: no `tx`, since Neon's HTTP driver has no interactive transactions. */
export type EdgeEnqueueOptions = Omit<EnqueueOptions, 'tx'>

/** Publish options on the edge: no `tx`. */
export type EdgePublishOptions = Omit<PublishOptions, 'tx'>

/** The same result as createSluice's enqueue: the id and whether the job was enqueued, blocked, a duplicate or discarded. */
export type EdgeEnqueueResult = EnqueueResult

/** Enqueue-only Sluice for edge runtimes: the same validation and statements as `createSluice`, no handlers. */
export interface EdgeClient {
  readonly schema: string
  readonly jobs: ReadonlyMap<string, AnyContract>
  /** `job` is a registered contract or its name. Validates input before anything is sent. */
  enqueue<J extends JobShape>(
    job: J | string,
    input: JobInput<J>,
    options?: EdgeEnqueueOptions,
  ): Promise<EdgeEnqueueResult>
  /** Many jobs of one kind in one statement; returns ids in input order. */
  enqueueMany<J extends JobShape>(
    job: J | string,
    inputs: readonly JobInput<J>[],
    options?: EdgeEnqueueOptions,
  ): Promise<EdgeEnqueueResult[]>
  /**
   * Publishes an event in one statement (one HTTP round trip): one job per subscription whose
   * pattern matches the topic. The subscribers' payload schemas are not known here: a payload
   * they reject fails their jobs (dead letters), so validate it before publishing.
   */
  publish(topic: string, payload: unknown, options?: EdgePublishOptions): Promise<PublishResult>
}

const isDb = (value: unknown): value is Db =>
  typeof value === 'object' && value !== null && typeof (value as Db).query === 'function' && 'kind' in value

const optionsSchema = z.strictObject({
  database: z.union([
    z.string().check(z.regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')),
    z.custom<Db>(isDb, 'must be a postgres:// URL or a Sluice database adapter'),
  ]),
  jobs: z.array(z.custom<AnyContract>(isContract, 'must come from defineContract()')),
  schema: z.optional(schemaNameSchema),
  wake: z.optional(z.record(z.string(), z.unknown())),
  maxPayloadBytes: z.optional(z.int().check(z.minimum(1), z.maximum(64 * 1024 * 1024))),
  env: z.optional(z.record(z.string(), z.optional(z.string()))),
})

function runtimeEnv(): Record<string, string | undefined> {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
  return process?.env ?? {}
}

function withoutTx<O extends object>(options: O): O {
  if (options !== null && typeof options === 'object' && (options as { tx?: unknown }).tx !== undefined) {
    throw new ValidationError("`tx` is not available on the edge: Neon's HTTP driver has no transactions.", [
      { path: ['tx'], message: 'not supported by the edge client' },
    ])
  }
  return options
}

/**
 * Creates an enqueue-and-publish client for edge runtimes (Vercel Edge, Cloudflare Workers).
 * It pulls in no handler code and no Node built-ins; a URL is opened with Neon's HTTP
 * driver, so every enqueue is one HTTP round trip.
 */
export function createEdgeClient(options: EdgeClientOptions): EdgeClient {
  const parsed = optionsSchema.safeParse(options, ONCE)
  if (!parsed.success) {
    const first = parsed.error.issues[0]
    throw new ConfigError(
      `Invalid edge client options: ${first?.path.join('.') || '(root)'} ${first?.message}`,
      toIssues(parsed.error.issues),
    )
  }
  const env = options.env ?? runtimeEnv()
  const schema = options.schema ?? env.SLUICE_SCHEMA ?? 'sluice'
  if (!schemaNameSchema.safeParse(schema).success) throw new ConfigError(`Invalid SLUICE_SCHEMA "${schema}".`)
  const t = quoteSchema(schema)
  const maxPayloadBytes = options.maxPayloadBytes ?? 256 * 1024
  const wake = resolveWake(options.wake, env)
  const jobs = new Map<string, AnyContract>()
  for (const job of options.jobs) {
    if (jobs.has(job.name)) throw new ConfigError(`Two contracts are named "${job.name}".`)
    jobs.set(job.name, job)
  }
  const database = options.database
  let db: Db | undefined = typeof database === 'string' ? undefined : database
  // neon() only parses the URL; it is called on first use so that a bad URL fails the request, not the import.
  const open = (): Db => {
    if (db) return db
    try {
      db = fromNeonHttp(neon(database as string))
    } catch (error) {
      throw new ConfigError(`Cannot use the database URL: ${error instanceof Error ? error.message : error}`)
    }
    return db
  }

  return {
    schema,
    jobs,
    async enqueue(job, input, opts = {}) {
      const contract = resolveJob(jobs, job)
      const row = prepare(contract, input, withoutTx(opts), maxPayloadBytes)
      const [result] = await enqueueAndWake(open(), t, [row], wake, false)
      return result!
    },
    async enqueueMany(job, inputs, opts = {}) {
      const contract = resolveJob(jobs, job)
      const rows = prepareMany(contract, inputs, withoutTx(opts), maxPayloadBytes)
      return enqueueAndWake(open(), t, rows, wake, false)
    },
    async publish(topic, payload, opts = {}) {
      const event = preparePublish(topic, payload, withoutTx(opts), maxPayloadBytes)
      return publishAndWake(open(), t, event, wake, false)
    },
  }
}
