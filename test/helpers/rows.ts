/**
 * A row factory: seeds Sluice's tables directly with SQL, in any state a job, queue or lock can
 * be in, so that the claim and settle statements can be tested on exactly the rows they meet.
 *
 * Times are given relative to the database's clock (`…InMs`, negative for the past), never the
 * test process's, so clock skew between the two cannot change what a test means. Every seeder
 * returns the id of what it wrote (as text, the way the SQL builders pass ids).
 */
import { randomUUID } from 'node:crypto'

/** Anything with pg's `query` (a Pool, a PoolClient, a Client). */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>
}

export interface JobParams {
  queue?: string
  name?: string
  payload?: unknown
  priority?: number
  /** When the job is due, relative to the database's now(); default 0 (due now). */
  dueInMs?: number
  /** An absolute due time instead (e.g. another seeded job's, for a tie). */
  dueAt?: Date
  attempts?: number
  maxAttempts?: number
  enqueuedInMs?: number
  /** Leased by an invocation: lease_until is the lease's end, run_at stays its place. */
  lease?: LeaseParams
  lastError?: unknown
  /** The failure history, oldest first. */
  errors?: readonly unknown[]
  concurrencyKey?: string
  uniqueKey?: string
  exclusiveKey?: string
  batchId?: string
  /** An admission policy's job: its policy (the job's name) and partition. */
  policy?: string
  partitionKey?: string
}

export interface LeaseParams {
  invocationId: string
  /** Default: a fresh random token. */
  token?: string
  /** When the lease ends, relative to now(); negative for an expired lease. Default 30 s. */
  expiresInMs?: number
}

export interface SeededJob {
  id: string
  /** The lease token, when leased. */
  token: string | null
}

export interface QueueParams {
  name: string
  paused?: boolean
  singleConsumer?: boolean
  globalCap?: number | null
  breakerThreshold?: number | null
  breakerBaseMs?: number
  breakerCapMs?: number
  consecutiveFailures?: number
  trips?: number
  /** The breaker is open until then (relative to now()). */
  breakerOpenForMs?: number
  /** The queue is held until then (relative to now()). */
  heldForMs?: number
  /** Its completed and expired jobs are archived (default true). */
  archive?: boolean
}

export interface PolicyParams {
  name: string
  queue?: string
  globalMax?: number | null
}

/** A partition of an admission policy, with its gates' state. */
export interface PartitionParams {
  policy: string
  partitionKey?: string
  queue?: string
  /** Throttle: `rate` tokens per `perMs`, at most `burst` (default rate); `tokens` now (default burst). */
  rate?: number | null
  perMs?: number
  burst?: number
  tokens?: number
  maxInFlight?: number | null
  quantum?: number | null
  adaptiveMin?: number | null
  adaptiveMax?: number | null
  targetLagMs?: number | null
  adaptiveCap?: number | null
  ewmaLagMs?: number | null
  paused?: boolean
  capOverride?: number | null
  /** Slowed down until then (relative to now()). */
  slowForMs?: number
  /** Relative to now(); default: enqueued now, never admitted. */
  lastEnqueuedInMs?: number | null
  lastAdmittedInMs?: number | null
}

export interface InvocationParams {
  id: string
  queues: readonly string[]
  priority?: number
  expiresInMs?: number
  jobsDone?: number
}

export interface QueueLeaseParams {
  queue: string
  holder: string
  expiresInMs?: number
}

export interface UniqueLockParams {
  key: string
  jobId: string
  strategy: 'until-executed' | 'while-executing'
  state?: 'queued' | 'executing'
  owner?: string | null
  expiresInMs?: number
}

export interface SemaphoreParams {
  key: string
  value: number
  limit: number
  ttlMs?: number
}

export interface BlockedParams {
  concurrencyKey: string
  queue?: string
  name?: string
  payload?: unknown
  priority?: number
  maxAttempts?: number
}

export interface BatchParams {
  total?: number
  completed?: number
  discarded?: number
  sealed?: boolean
  callbacks?: Record<string, { name: string; queue: string; priority: number; maxAttempts: number }>
  properties?: Record<string, unknown>
}

export interface ArchivedParams {
  queue?: string
  name?: string
  status?: 'completed' | 'expired'
  attempts?: number
  durationMs?: number | null
  waitMs?: number | null
}

export interface DeadLetterParams {
  queue?: string
  name?: string
  payload?: unknown
  attempts?: number
  maxAttempts?: number
  lastError?: unknown
  errors?: readonly unknown[]
}

const ms = (n: number): string => `now() + ${Math.trunc(n)} * interval '1 millisecond'`
const json = (value: unknown): string => JSON.stringify(value)

/** A failure as settle records it in a job's errors history. */
export function failureEntry(attempt: number, message = `failure ${attempt}`): Record<string, unknown> {
  return { name: 'Error', message, attempt, at: new Date(0).toISOString() }
}

/** Seeders for the schema quoted as `t` (e.g. `"t_123"`), writing through `db`. */
export function rowFactory(db: Queryable, t: string, options: { leaseInRunAt?: boolean } = {}) {
  const one = async (text: string, values: unknown[]): Promise<Record<string, unknown>> => {
    const { rows } = await db.query(text, values)
    const row = rows[0]
    if (!row) throw new Error(`seed wrote nothing: ${text}`)
    return row
  }

  async function job(p: JobParams = {}): Promise<SeededJob> {
    const token = p.lease ? (p.lease.token ?? randomUUID()) : null
    // $15, an absolute due time, wins when given. A leased job keeps its place (run_at); its
    // lease's end is lease_until, and the lease has its row in claim_leases, as a claim writes.
    // With `leaseInRunAt`, as a claim wrote before migration 0027: run_at is the lease's end.
    const legacy = options.leaseInRunAt === true
    const leaseEnd = ms(p.lease?.expiresInMs ?? 30_000)
    const runAt = `coalesce($15::timestamptz, ${p.lease && legacy ? leaseEnd : ms(p.dueInMs ?? 0)})`
    const lease = legacy
      ? { column: '', value: '', row: '' }
      : {
          column: ', lease_until',
          value: `, ${p.lease ? leaseEnd : 'NULL'}`,
          row: `, l AS (
       INSERT INTO ${t}.claim_leases (token, queue, policy, partition_key, lease_until, ids)
       SELECT lease_token, queue, policy, partition_key, lease_until, ARRAY[id] FROM j WHERE lease_token IS NOT NULL
     )`,
        }
    const row = await one(
      `WITH j AS (
       INSERT INTO ${t}.jobs (queue, name, payload, priority, run_at, attempts, max_attempts, lease_token, leased_by,
                            enqueued_at, last_error, errors, concurrency_key, unique_key, exclusive_key, batch_id,
                            policy, partition_key${lease.column})
       VALUES ($1, $2, $3::jsonb, $4, ${runAt}, $5, $6, $7::uuid, $8, ${ms(p.enqueuedInMs ?? 0)}, $9::jsonb,
               $10::jsonb, $11, $12, $13, $14::bigint, $16, $17${lease.value})
       RETURNING *
     )${lease.row}
     SELECT id::text AS id FROM j`,
      [
        p.queue ?? 'default',
        p.name ?? 'work',
        json(p.payload ?? {}),
        p.priority ?? 16384,
        p.attempts ?? (p.lease ? 1 : 0),
        p.maxAttempts ?? 5,
        token,
        p.lease?.invocationId ?? null,
        p.lastError === undefined ? null : json(p.lastError),
        json(p.errors ?? []),
        p.concurrencyKey ?? null,
        p.uniqueKey ?? null,
        p.exclusiveKey ?? null,
        p.batchId ?? null,
        p.lease && legacy ? null : (p.dueAt?.toISOString() ?? null),
        p.policy ?? null,
        p.policy === undefined ? null : (p.partitionKey ?? ''),
      ],
    )
    return { id: row.id as string, token }
  }

  const seeders = {
    job,

    /** A job due now, never tried. */
    ready: (p: Omit<JobParams, 'lease'> = {}) => job(p),

    /** A job not due yet (default: in an hour). */
    scheduled: (p: Omit<JobParams, 'lease'> = {}) => job({ dueInMs: 3_600_000, ...p }),

    /** A job leased to `invocationId` (attempt 1 by default, lease ends in 30 s by default). */
    leased: (
      invocationId: string,
      p: Omit<JobParams, 'lease'> & Partial<Omit<LeaseParams, 'invocationId'>> = {},
    ) => {
      const { token, expiresInMs, ...rest } = p
      return job({ ...rest, lease: { invocationId, token, expiresInMs } })
    },

    /** A job that failed `failures` times and waits for its retry, with its errors history. */
    failed: (failures: number, p: Omit<JobParams, 'lease' | 'attempts' | 'errors'> = {}) => {
      const errors = Array.from({ length: failures }, (_, i) => failureEntry(i + 1))
      return job({ dueInMs: 0, ...p, attempts: failures, errors, lastError: errors.at(-1) ?? null })
    },

    /**
     * A job whose last attempt's lease ran out (default: a second ago, under `inv-gone`): no
     * attempts left, never claimed again; maintenance dead-letters it.
     */
    exhausted: (
      p: Omit<JobParams, 'lease' | 'attempts' | 'dueInMs'> & {
        invocationId?: string
        expiredMsAgo?: number
      } = {},
    ) => {
      const { invocationId, expiredMsAgo, ...rest } = p
      const maxAttempts = p.maxAttempts ?? 3
      return job({
        ...rest,
        maxAttempts,
        attempts: maxAttempts,
        lease: { invocationId: invocationId ?? 'inv-gone', expiresInMs: -(expiredMsAgo ?? 1_000) },
      })
    },

    /** A job held back by a concurrency limit: its semaphore is full, it waits in `blocked`. */
    async blocked(p: BlockedParams): Promise<string> {
      const row = await one(
        `INSERT INTO ${t}.blocked (id, concurrency_key, queue, name, payload, priority, max_attempts, run_at)
         VALUES (nextval(pg_get_serial_sequence('${t}.jobs', 'id')), $1, $2, $3, $4::jsonb, $5, $6, now())
         RETURNING id::text AS id`,
        [
          p.concurrencyKey,
          p.queue ?? 'default',
          p.name ?? 'work',
          json(p.payload ?? {}),
          p.priority ?? 16384,
          p.maxAttempts ?? 5,
        ],
      )
      return row.id as string
    },

    async semaphore(p: SemaphoreParams): Promise<string> {
      const ttl = p.ttlMs ?? 60_000
      await one(
        `INSERT INTO ${t}.semaphores (key, value, lim, ttl_ms, expires_at) VALUES ($1, $2, $3, $4, ${ms(ttl)})
         RETURNING key`,
        [p.key, p.value, p.limit, ttl],
      )
      return p.key
    },

    async uniqueLock(p: UniqueLockParams): Promise<string> {
      await one(
        `INSERT INTO ${t}.unique_locks (key, job_id, strategy, state, owner, expires_at)
         VALUES ($1, $2::bigint, $3, $4, $5, ${ms(p.expiresInMs ?? 60_000)}) RETURNING key`,
        [
          p.key,
          p.jobId,
          p.strategy,
          p.state ?? (p.strategy === 'while-executing' ? 'executing' : 'queued'),
          p.owner ?? null,
        ],
      )
      return p.key
    },

    /** A queue's row (settings and state); upserted, so it may be called again to change it. */
    async queue(p: QueueParams): Promise<string> {
      const breaker = p.breakerOpenForMs === undefined ? 'NULL' : ms(p.breakerOpenForMs)
      const held = p.heldForMs === undefined ? 'NULL' : ms(p.heldForMs)
      await one(
        `INSERT INTO ${t}.queues AS c (name, paused, paused_at, single_consumer, global_cap, breaker_threshold,
                                      breaker_base_ms, breaker_cap_ms, consecutive_failures, trips, breaker_until,
                                      held_until, archive)
         VALUES ($1, $2, CASE WHEN $2 THEN now() END, $3, $4, $5, $6, $7, $8, $9, ${breaker}, ${held}, $10)
         ON CONFLICT (name) DO UPDATE SET paused = excluded.paused, paused_at = excluded.paused_at,
           single_consumer = excluded.single_consumer, global_cap = excluded.global_cap,
           breaker_threshold = excluded.breaker_threshold, breaker_base_ms = excluded.breaker_base_ms,
           breaker_cap_ms = excluded.breaker_cap_ms, consecutive_failures = excluded.consecutive_failures,
           trips = excluded.trips, breaker_until = excluded.breaker_until, held_until = excluded.held_until,
           archive = excluded.archive
         RETURNING name`,
        [
          p.name,
          p.paused ?? false,
          p.singleConsumer ?? false,
          p.globalCap ?? null,
          p.breakerThreshold ?? null,
          p.breakerThreshold == null ? null : (p.breakerBaseMs ?? 1_000),
          p.breakerThreshold == null ? null : (p.breakerCapMs ?? 60_000),
          p.consecutiveFailures ?? 0,
          p.trips ?? 0,
          p.archive ?? true,
        ],
      )
      return p.name
    },

    /** An admission policy's row; upserted. */
    async policy(p: PolicyParams): Promise<string> {
      await one(
        `INSERT INTO ${t}.policies (name, queue, global_max) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET queue = excluded.queue, global_max = excluded.global_max
         RETURNING name`,
        [p.name, p.queue ?? 'default', p.globalMax ?? null],
      )
      return p.name
    },

    /** A partition's row with its gates' state (the policy's row too, when missing); upserted. */
    async partition(p: PartitionParams): Promise<string> {
      const queue = p.queue ?? 'default'
      await db.query(
        `INSERT INTO ${t}.policies (name, queue) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
        [p.policy, queue],
      )
      const at = (n: number | null | undefined): string => (n === null || n === undefined ? 'NULL' : ms(n))
      const rate = p.rate ?? null
      const burst = rate === null ? null : (p.burst ?? Math.max(1, rate))
      await one(
        `INSERT INTO ${t}.partitions AS x (policy, partition_key, queue, rate, per_ms, burst, tokens, refilled_at,
            max_in_flight, quantum, adaptive_min, adaptive_max, target_lag_ms, adaptive_cap, ewma_lag_ms, paused,
            cap_override, slow_until, last_enqueued_at, last_admitted_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $4::float8 IS NOT NULL THEN now() END, $8, $9, $10, $11, $12,
                 $13, $14, $15, $16, ${at(p.slowForMs)},
                 ${p.lastEnqueuedInMs === undefined ? 'now()' : at(p.lastEnqueuedInMs)}, ${at(p.lastAdmittedInMs)})
         ON CONFLICT (policy, partition_key) DO UPDATE SET queue = excluded.queue, rate = excluded.rate,
           per_ms = excluded.per_ms, burst = excluded.burst, tokens = excluded.tokens, refilled_at = excluded.refilled_at,
           max_in_flight = excluded.max_in_flight, quantum = excluded.quantum, adaptive_min = excluded.adaptive_min,
           adaptive_max = excluded.adaptive_max, target_lag_ms = excluded.target_lag_ms,
           adaptive_cap = excluded.adaptive_cap, ewma_lag_ms = excluded.ewma_lag_ms, paused = excluded.paused,
           cap_override = excluded.cap_override, slow_until = excluded.slow_until,
           last_enqueued_at = excluded.last_enqueued_at, last_admitted_at = excluded.last_admitted_at
         RETURNING partition_key`,
        [
          p.policy,
          p.partitionKey ?? '',
          queue,
          rate,
          rate === null ? null : (p.perMs ?? 1_000),
          burst,
          rate === null ? null : (p.tokens ?? burst),
          p.maxInFlight ?? null,
          p.quantum ?? null,
          p.adaptiveMin ?? null,
          p.adaptiveMax ?? null,
          p.targetLagMs ?? null,
          p.adaptiveCap ?? null,
          p.ewmaLagMs ?? null,
          p.paused ?? false,
          p.capOverride ?? null,
        ],
      )
      return p.partitionKey ?? ''
    },

    async invocation(p: InvocationParams): Promise<string> {
      await one(
        `INSERT INTO ${t}.invocations (id, queues, priority, expires_at, jobs_done)
         VALUES ($1, $2::text[], $3, ${ms(p.expiresInMs ?? 30_000)}, $4) RETURNING id`,
        [p.id, p.queues, p.priority ?? 0, p.jobsDone ?? 0],
      )
      return p.id
    },

    async queueLease(p: QueueLeaseParams): Promise<string> {
      await one(
        `INSERT INTO ${t}.queue_leases (queue, holder, expires_at) VALUES ($1, $2, ${ms(p.expiresInMs ?? 30_000)})
         RETURNING queue`,
        [p.queue, p.holder],
      )
      return p.queue
    },

    async batch(p: BatchParams = {}): Promise<string> {
      const row = await one(
        `INSERT INTO ${t}.batches (total, completed, discarded, sealed, callbacks, properties)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb) RETURNING id::text AS id`,
        [
          p.total ?? 0,
          p.completed ?? 0,
          p.discarded ?? 0,
          p.sealed ?? false,
          json(p.callbacks ?? {}),
          json(p.properties ?? {}),
        ],
      )
      return row.id as string
    },

    async archived(p: ArchivedParams = {}): Promise<string> {
      const row = await one(
        `INSERT INTO ${t}.archive (id, queue, name, payload, priority, attempts, max_attempts, status, enqueued_at,
                                  duration_ms, wait_ms)
         VALUES (nextval(pg_get_serial_sequence('${t}.jobs', 'id')), $1, $2, '{}', 16384, $3, 5, $4, now(), $5, $6)
         RETURNING id::text AS id`,
        [
          p.queue ?? 'default',
          p.name ?? 'work',
          p.attempts ?? 1,
          p.status ?? 'completed',
          p.durationMs ?? 10,
          p.waitMs ?? 0,
        ],
      )
      return row.id as string
    },

    async deadLetter(p: DeadLetterParams = {}): Promise<string> {
      const attempts = p.attempts ?? p.maxAttempts ?? 5
      const errors = p.errors ?? Array.from({ length: attempts }, (_, i) => failureEntry(i + 1))
      const row = await one(
        `INSERT INTO ${t}.dead_letters (id, queue, name, payload, priority, attempts, max_attempts, enqueued_at,
                                       last_error, errors)
         VALUES (nextval(pg_get_serial_sequence('${t}.jobs', 'id')), $1, $2, $7::jsonb, 16384, $3, $4, now(),
                 $5::jsonb, $6::jsonb)
         RETURNING id::text AS id`,
        [
          p.queue ?? 'default',
          p.name ?? 'work',
          attempts,
          p.maxAttempts ?? attempts,
          json(p.lastError ?? errors.at(-1) ?? null),
          json(errors),
          json(p.payload ?? {}),
        ],
      )
      return row.id as string
    },
  }

  /** Composite states: the job and the rows that put it there. */
  const states = {
    /** A job whose concurrency key is at its limit: the semaphore is full and the job is blocked. */
    async blockedByLimit(key: string, p: Omit<BlockedParams, 'concurrencyKey'> & { limit?: number } = {}) {
      const limit = p.limit ?? 1
      await seeders.semaphore({ key, value: limit, limit })
      return seeders.blocked({ ...p, concurrencyKey: key })
    },
    /** A queued job holding an until-executed lock on `key`. */
    async uniqueQueued(key: string, p: Omit<JobParams, 'uniqueKey' | 'lease'> = {}) {
      const seeded = await job({ ...p, uniqueKey: key })
      await seeders.uniqueLock({ key, jobId: seeded.id, strategy: 'until-executed' })
      return seeded
    },
    /** A job of a while-executing key whose lock another job (running under `owner`) holds. */
    async exclusiveBlocked(key: string, owner: string, p: Omit<JobParams, 'exclusiveKey' | 'lease'> = {}) {
      const holder = await seeders.leased(owner, { queue: p.queue, exclusiveKey: key })
      await seeders.uniqueLock({ key, jobId: holder.id, strategy: 'while-executing', owner })
      const waiting = await job({ ...p, exclusiveKey: key })
      return { holder, waiting }
    },
    /** A ready job in a paused queue. */
    async inPausedQueue(queue: string, p: Omit<JobParams, 'queue'> = {}) {
      await seeders.queue({ name: queue, paused: true })
      return job({ ...p, queue })
    },
    /** A ready job in a queue whose breaker is open (for `forMs`). */
    async behindOpenBreaker(queue: string, forMs = 60_000, p: Omit<JobParams, 'queue'> = {}) {
      await seeders.queue({ name: queue, breakerThreshold: 3, trips: 1, breakerOpenForMs: forMs })
      return job({ ...p, queue })
    },
    /** A ready job in a single-consumer queue whose lease `holder` holds. */
    async inHeldSingleConsumer(queue: string, holder: string, p: Omit<JobParams, 'queue'> = {}) {
      await seeders.queue({ name: queue, singleConsumer: true })
      await seeders.invocation({ id: holder, queues: [queue] })
      await seeders.queueLease({ queue, holder })
      return job({ ...p, queue })
    },
    /** `size` ready jobs in one unsealed batch (the batch's total counts them). */
    async inBatch(size: number, p: Omit<JobParams, 'batchId'> & { batch?: BatchParams } = {}) {
      const { batch: batchParams, ...rest } = p
      const batchId = await seeders.batch({ total: size, ...batchParams })
      const jobs: SeededJob[] = []
      for (let i = 0; i < size; i++) jobs.push(await job({ ...rest, batchId }))
      return { batchId, jobs }
    },
  }

  return { ...seeders, ...states }
}

export type RowFactory = ReturnType<typeof rowFactory>
