/**
 * The fault scenario: several drain processes work through a queue while faults are injected
 * at seeded moments (killed processes, terminated backends, cut TCP connections, a restarted
 * server), with overlapping maintenance calls throughout. Afterwards every run the workers
 * recorded is checked against the database and against the faults. Shared by the standing
 * test (test/chaos/chaos.test.ts) and the long soak (scripts/chaos.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { createSluice, type Sluice } from '../../src/index.js'
import { tsxLoader } from '../helpers/cli.js'
import { bootEmbedded, type EmbeddedCluster } from '../support/embedded-postgres.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'
import {
  type ChaosInput,
  chaosJobs,
  chaosOptions,
  EFFECT_TOPIC,
  EFFECTS_TABLE,
  LEDGER_QUEUE,
  STEP_EFFECTS_TABLE,
  silent,
} from './jobs.js'
import {
  analyse,
  type ChaosFigures,
  type DbFacts,
  type Fault,
  parseRunLog,
  type Run,
  type RunLog,
} from './verdict.js'

export interface ChaosPlan {
  seed: number
  /** Jobs of each kind (see jobs.ts) and events for the exactly-once subscriber. */
  plain: number
  keyed: number
  limited: number
  /** Jobs of durable steps (plain and transactional). */
  steps: number
  /** Jobs of a single-consumer queue: each starts only once the one before it has returned. */
  ledger: number
  events: number
  /** Distinct keys among the keyed and the limited jobs. */
  keys: number
  /** Drain processes running at once. */
  workers: number
  /** Faults to inject, each at a seeded point of progress inside `window`. */
  faults: { kill: number; terminate: number; cut: number; restart: number }
  /** `fast`: a planned restart; `immediate`: a crash (see EmbeddedCluster.restart). */
  restartMode: 'fast' | 'immediate'
  /** Faults fall between these fractions of the jobs archived. */
  window: [number, number]
  drain: { budgetMs: number; safetyMarginMs: number; leaseGraceMs: number; concurrency: number }
  /** Handlers wait 0..maxHandlerMs (most of them 0). */
  maxHandlerMs: number
  /** The work phase (faults, then every job done) gives up after this long and reports what is missing. */
  timeoutMs: number
  /** Keep the workers' files (their directory is in the report). */
  keepLogs?: boolean
  log?: (line: string) => void
}

export interface ChaosReport {
  plan: ChaosPlan
  figures: ChaosFigures
  faults: Fault[]
  /** Each broken promise, described; empty when everything held. */
  violations: string[]
  logDir?: string
}

/** mulberry32: a small seeded generator, so a seed replays the same fault plan. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `condition` until it holds; throws with `what` after `timeoutMs`. */
async function until(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
  everyMs = 25,
): Promise<void> {
  const giveUp = Date.now() + timeoutMs
  const holds = (): Promise<boolean> =>
    condition().catch((error: unknown) => {
      if (error instanceof GiveUp) throw error
      return false
    })
  while (!(await holds())) {
    if (Date.now() > giveUp) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}

/** Thrown from inside a wait to end the run now rather than at its timeout. */
class GiveUp extends Error {}

/** Drain processes may crash this many times (each one a violation) before the run gives up. */
const MAX_CRASHES = 3

const workerScript = fileURLToPath(new URL('./worker.ts', import.meta.url))
const SCHEMA = 'chaos'
const APP_PREFIX = 'sluice-chaos-'

/** One drain process's place: its proxy stays, its process is replaced when killed. */
interface Slot {
  index: number
  proxy: TcpProxy
  child?: ChildProcess
  pid?: number
  ready?: Promise<void>
  /** Set before the suite kills or stops it: any other exit is a crash. */
  expectExit: boolean
  exited?: Promise<void>
  stderr: string
}

interface Crash {
  slot: number
  pid: number
  at: number
  code: number | null
  signal: string | null
  stderr: string
}

class ChaosRun {
  /** One generator each, so that the fault plan and its targets replay exactly from the seed. */
  readonly random: { inputs: () => number; faults: () => number; maintenance: () => number }
  readonly faults: Fault[] = []
  readonly crashes: Crash[] = []
  readonly slots: Slot[] = []
  readonly violations: string[] = []
  readonly defs = chaosJobs(silent, SCHEMA)
  cluster?: EmbeddedCluster
  admin?: pg.Pool
  maintainers: Sluice[] = []
  logDir = ''
  processes = 0
  maintenance = { calls: 0, failed: 0, overlapping: 0, tasksRun: 0 }
  private maintaining = false
  private maintenanceLoop?: Promise<void>
  private stopping = false

  constructor(readonly plan: ChaosPlan) {
    this.random = {
      inputs: seeded(plan.seed),
      faults: seeded(plan.seed + 1),
      maintenance: seeded(plan.seed + 2),
    }
  }

  log(line: string): void {
    this.plan.log?.(line)
  }

  int(n: number, from: keyof ChaosRun['random']): number {
    return Math.floor(this.random[from]() * n)
  }

  get total(): number {
    const p = this.plan
    return p.plain + p.keyed + p.limited + p.steps + p.ledger + p.events
  }

  async setUp(): Promise<void> {
    this.logDir = await mkdtemp(join(tmpdir(), 'sluice-chaos-'))
    // Its own server, never the machine's: the suite restarts it. Commits wait for the WAL as
    // they do in production, so a crash loses only what Sluice itself chose not to wait for.
    this.cluster = await bootEmbedded('sluice-chaos-pg-', { durableCommits: true })
    const url = new URL(this.cluster.url)
    url.searchParams.set('application_name', `${APP_PREFIX}suite`)
    this.admin = new pg.Pool({ connectionString: url.toString(), max: 3 })
    this.admin.on('error', () => {})
    const { jobs, subscribers } = this.defs
    for (let i = 0; i < 3; i++) {
      this.maintainers.push(
        createSluice({
          ...chaosOptions,
          database: url.toString(),
          schema: SCHEMA,
          jobs,
          subscribers,
          queues: { [LEDGER_QUEUE]: { singleActiveConsumer: true } },
        }),
      )
    }
    await this.maintainers[0]!.migrate()
    await this.maintainers[0]!.syncQueues()
    await this.admin.query(
      `CREATE TABLE "${SCHEMA}".${EFFECTS_TABLE} (event_id text NOT NULL, n integer NOT NULL, pid integer NOT NULL, attempt integer NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    )
    await this.admin.query(
      `CREATE TABLE "${SCHEMA}".${STEP_EFFECTS_TABLE} (job_id bigint NOT NULL, step text NOT NULL, pid integer NOT NULL)`,
    )
  }

  /** Enqueues every job and publishes every event before the drains start, interleaved by kind. */
  async enqueue(): Promise<void> {
    const sluice = this.maintainers[0]!
    const { plain, keyed, limited, steps, ledger } = this.defs
    const rounds = 10
    let n = 0
    const inputs = (count: number): ChaosInput[] =>
      Array.from({ length: count }, () => {
        const ms = this.random.inputs() < 0.7 ? 0 : 1 + this.int(this.plan.maxHandlerMs, 'inputs')
        return { n: n++, ms, key: this.int(this.plan.keys, 'inputs') }
      })
    const share = (count: number, round: number): number =>
      Math.floor((count * (round + 1)) / rounds) - Math.floor((count * round) / rounds)
    for (let round = 0; round < rounds; round++) {
      for (let i = 0, c = share(this.plan.plain, round); i < c; i += 5_000) {
        await sluice.enqueueMany(plain, inputs(Math.min(5_000, c - i)))
      }
      if (share(this.plan.keyed, round) > 0)
        await sluice.enqueueMany(keyed, inputs(share(this.plan.keyed, round)))
      if (share(this.plan.limited, round) > 0)
        await sluice.enqueueMany(limited, inputs(share(this.plan.limited, round)))
      if (share(this.plan.steps, round) > 0)
        await sluice.enqueueMany(steps, inputs(share(this.plan.steps, round)))
      if (share(this.plan.ledger, round) > 0)
        await sluice.enqueueMany(ledger, inputs(share(this.plan.ledger, round)))
      const events = Array.from({ length: share(this.plan.events, round) }, () => n++)
      for (let i = 0; i < events.length; i += 16) {
        await Promise.all(
          events
            .slice(i, i + 16)
            .map((e) => sluice.publish(EFFECT_TOPIC, { n: e }, { eventId: `effect-${e}` })),
        )
      }
    }
    const [{ count }] = (await this.admin!.query(`SELECT count(*)::int AS count FROM "${SCHEMA}".jobs`)).rows
    const [{ blocked }] = (
      await this.admin!.query(`SELECT count(*)::int AS blocked FROM "${SCHEMA}".blocked`)
    ).rows
    if (count + blocked !== this.total) {
      throw new Error(`Enqueued ${count} jobs and ${blocked} blocked, expected ${this.total}`)
    }
  }

  async startWorkers(): Promise<void> {
    for (let index = 0; index < this.plan.workers; index++) {
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: this.cluster!.port })
      const slot: Slot = { index, proxy, expectExit: false, stderr: '' }
      this.slots.push(slot)
      this.spawn(slot)
    }
    await Promise.all(this.slots.map((slot) => slot.ready))
  }

  private spawn(slot: Slot): void {
    const url = new URL(this.cluster!.url)
    url.port = String(slot.proxy.port)
    const child = spawn(process.execPath, ['--import', tsxLoader, workerScript], {
      env: {
        ...process.env,
        DATABASE_URL: '',
        CHAOS_DATABASE_URL: url.toString(),
        SLUICE_SCHEMA: SCHEMA,
        CHAOS_SLOT: String(slot.index),
        CHAOS_LOG_DIR: this.logDir,
        CHAOS_BUDGET_MS: String(this.plan.drain.budgetMs),
        CHAOS_SAFETY_MARGIN_MS: String(this.plan.drain.safetyMarginMs),
        CHAOS_LEASE_GRACE_MS: String(this.plan.drain.leaseGraceMs),
        CHAOS_CONCURRENCY: String(this.plan.drain.concurrency),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    this.processes++
    slot.child = child
    slot.pid = child.pid!
    slot.expectExit = false
    slot.stderr = ''
    const pid = child.pid!
    child.stderr!.on('data', (d: Buffer) => {
      slot.stderr = (slot.stderr + d.toString()).slice(-4_000)
    })
    slot.ready = new Promise((resolve, reject) => {
      let out = ''
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString()
        if (out.includes('ready\n')) resolve()
      })
      child.once('exit', () => reject(new Error(`worker ${pid} exited before it was ready`)))
    })
    slot.ready.catch(() => {})
    slot.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (!slot.expectExit) {
          this.crashes.push({ slot: slot.index, pid, at: Date.now(), code, signal, stderr: slot.stderr })
          this.log(`worker ${pid} (slot ${slot.index}) exited on its own: code ${code}, signal ${signal}`)
          // Keep the fleet at full strength, unless it keeps dying.
          if (!this.stopping && this.crashes.length <= MAX_CRASHES) this.spawn(slot)
        }
        resolve()
      })
    })
  }

  /** When the work phase must be over. */
  workDeadline = Number.POSITIVE_INFINITY

  /** Time left in the work phase: every wait in it is bounded by the plan's timeout in all. */
  get left(): number {
    return Math.max(0, this.workDeadline - Date.now())
  }

  /** Archived jobs so far. Throws, to end the run early, once the drain processes keep crashing. */
  async progress(): Promise<number> {
    if (this.crashes.length > MAX_CRASHES) {
      throw new GiveUp(`${this.crashes.length} drain processes crashed: giving up`)
    }
    const { rows } = await this.admin!.query(`SELECT count(*)::int AS n FROM "${SCHEMA}".archive`)
    return rows[0].n
  }

  /** Overlapping and duplicated maintenance calls, as doubled cron deliveries would make. */
  startMaintenance(): void {
    this.maintaining = true
    this.maintenanceLoop = (async () => {
      while (this.maintaining) {
        const calls = 1 + this.int(3, 'maintenance')
        if (calls > 1) this.maintenance.overlapping++
        const reports = await Promise.allSettled(
          Array.from({ length: calls }, (_, i) => this.maintainers[i]!.maintain()),
        )
        for (const report of reports) {
          this.maintenance.calls++
          if (report.status === 'rejected') this.maintenance.failed++
          else this.maintenance.tasksRun += report.value.tasks.filter((t) => t.ran).length
        }
        await sleep(50 + this.int(200, 'maintenance'))
      }
    })()
  }

  async stopMaintenance(): Promise<void> {
    this.maintaining = false
    await this.maintenanceLoop
  }

  /** A slot whose process is up, chosen by the seed. */
  private async target(): Promise<Slot & { child: ChildProcess; pid: number }> {
    const slot = this.slots[this.int(this.slots.length, 'faults')]!
    await until(
      async () => {
        await slot.ready
        return true
      },
      30_000,
      `worker slot ${slot.index} to be ready`,
    )
    return slot as Slot & { child: ChildProcess; pid: number }
  }

  /** The runs a worker's file shows started and not ended. */
  private async running(slot: number, pid: number): Promise<Run[]> {
    const text = await readFile(join(this.logDir, `runs-${slot}-${pid}.log`), 'utf8').catch(() => '')
    return parseRunLog(text).runs.filter((r) => r.how === undefined)
  }

  /** How many runs a worker's file shows started and not ended. */
  private async unfinished(slot: number, pid: number): Promise<number> {
    return (await this.running(slot, pid)).length
  }

  /**
   * The worker running a ledger job now, if one does within 10 s: the holder of the
   * single-consumer queue, whose death must not let the queue's later jobs overtake that one.
   */
  private async ledgerHolder(): Promise<(Slot & { child: ChildProcess; pid: number }) | undefined> {
    const { rows } = await this.admin!.query<{ id: string }>(
      `SELECT id::text AS id FROM "${SCHEMA}".jobs WHERE queue = $1`,
      [LEDGER_QUEUE],
    )
    const ids = new Set(rows.map((r) => r.id))
    let found: (Slot & { child: ChildProcess; pid: number }) | undefined
    await until(
      async () => {
        for (const slot of this.slots) {
          if (slot.pid === undefined || slot.child === undefined) continue
          if ((await this.running(slot.index, slot.pid)).some((r) => ids.has(r.id))) {
            found = slot as Slot & { child: ChildProcess; pid: number }
            return true
          }
        }
        return false
      },
      10_000,
      'a running ledger job',
      5,
    ).catch(() => {})
    return found
  }

  /**
   * Kills a worker, preferably while a handler runs: it waits up to a second for one (handlers
   * last a few milliseconds, so it may end first) and kills anyway. What the kill stopped is
   * recorded; the verdict does not depend on it.
   */
  private async kill(slot: Slot & { child: ChildProcess; pid: number }): Promise<void> {
    const { index, pid } = slot
    await until(async () => (await this.unfinished(index, pid)) > 0, 1_000, 'a running handler', 2).catch(
      () => {},
    )
    slot.expectExit = true
    const at = Date.now()
    slot.child.kill('SIGKILL')
    await slot.exited
    const stopped = await this.unfinished(index, pid)
    this.faults.push({ kind: 'kill', at, slot: index, pid, stopped })
    this.log(`kill: worker ${pid} (slot ${index}), ${stopped} runs stopped`)
    this.spawn(slot)
  }

  /** A worker's backends: only this cluster's, only this database's, only that worker's. */
  private readonly backendsOf =
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`

  async inject(kind: Fault['kind']): Promise<void> {
    if (kind === 'restart') {
      const at = Date.now()
      await this.cluster!.restart(this.plan.restartMode)
      const fault: Fault = { kind, at, end: Date.now(), mode: this.plan.restartMode }
      this.faults.push(fault)
      this.log(`restart (${fault.mode}): server down ${fault.end - at} ms`)
      return
    }
    const slot = await this.target()
    const pid = slot.pid
    if (kind === 'kill') {
      await this.kill(slot)
    } else if (kind === 'terminate') {
      // Worth doing once the process has backends (a fresh one may not have connected yet).
      const name = `${APP_PREFIX}${slot.index}-${pid}`
      await until(
        async () => (await this.admin!.query(this.backendsOf, [name])).rows.length > 0,
        10_000,
        `backends of ${name}`,
      ).catch(() => {})
      const at = Date.now()
      const { rows } = await this.admin!.query(
        `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = $1`,
        [name],
      )
      this.faults.push({ kind, at, slot: slot.index, pid, hit: rows[0].n })
      this.log(`terminate: ${rows[0].n} backends of worker ${pid}`)
    } else {
      await until(async () => slot.proxy.live > 0, 10_000, 'a connection').catch(() => {})
      const at = Date.now()
      const cut = slot.proxy.cut()
      this.faults.push({ kind, at, slot: slot.index, pid, hit: cut })
      this.log(`cut: ${cut} connections of worker ${pid}`)
    }
  }

  /** Each planned fault at its seeded point of progress, in progress order. */
  async injectFaults(): Promise<void> {
    const kinds: Fault['kind'][] = []
    for (const kind of ['kill', 'terminate', 'cut', 'restart'] as const) {
      for (let i = 0; i < this.plan.faults[kind]; i++) kinds.push(kind)
    }
    // The first kill, at once: the holder of the ledger's queue, in the middle of a ledger job.
    const holder = this.plan.ledger > 0 && kinds.includes('kill') ? await this.ledgerHolder() : undefined
    if (holder) {
      this.log(`kill of the ledger's holder`)
      await this.kill(holder)
      kinds.splice(kinds.indexOf('kill'), 1)
    }
    const [from, to] = this.plan.window
    const plan = kinds
      .map((kind) => ({ kind, at: from + this.random.faults() * (to - from) }))
      .sort((a, b) => a.at - b.at)
    // Between two faults the fleet gets some work done (0.5 % of the jobs), so that faults do
    // not all land in the same stall.
    const gap = Math.ceil(this.total / 200)
    let done = 0
    for (const { kind, at } of plan) {
      const goal = Math.min(this.total - 1, Math.max(Math.ceil(at * this.total), done + gap))
      await until(
        async () => {
          done = await this.progress()
          return done >= goal
        },
        this.left,
        `${goal} jobs archived`,
      )
      await this.inject(kind)
    }
  }

  async waitForAll(): Promise<void> {
    await until(async () => (await this.progress()) >= this.total, this.left, 'every job archived')
  }

  /** SIGTERM: each worker finishes the drain call in progress and exits. */
  async stopWorkers(): Promise<void> {
    this.stopping = true
    await Promise.all(
      this.slots.map(async (slot) => {
        // A worker still starting has no SIGTERM handler yet.
        await slot.ready?.catch(() => {})
        if (!slot.child || slot.child.exitCode !== null || slot.child.signalCode !== null) return
        slot.expectExit = true
        slot.child.kill('SIGTERM')
        const stopped = await Promise.race([slot.exited!.then(() => true), sleep(30_000).then(() => false)])
        if (!stopped) {
          this.violations.push(`worker ${slot.pid} (slot ${slot.index}) did not stop within 30 s of SIGTERM`)
          slot.child.kill('SIGKILL')
          await slot.exited
        } else if (slot.child.exitCode !== 0) {
          this.violations.push(
            `worker ${slot.pid} (slot ${slot.index}) stopped with code ${slot.child.exitCode}: ${slot.stderr}`,
          )
        }
      }),
    )
  }

  /** What is left behind once maintenance has run after the last lease ran out. */
  async leftovers(): Promise<DbFacts['leftovers']> {
    const { rows } = await this.admin!.query(`SELECT
      (SELECT count(*) FROM "${SCHEMA}".jobs)::int AS jobs,
      (SELECT count(*) FROM "${SCHEMA}".jobs WHERE lease_token IS NOT NULL)::int AS leased,
      (SELECT count(*) FROM "${SCHEMA}".blocked)::int AS blocked,
      (SELECT count(*) FROM "${SCHEMA}".invocations)::int AS invocations,
      (SELECT count(*) FROM "${SCHEMA}".unique_locks)::int AS "uniqueLocks",
      (SELECT coalesce(sum(value), 0) FROM "${SCHEMA}".semaphores)::int AS "semaphoreSlots",
      (SELECT count(*) FROM "${SCHEMA}".queue_leases)::int AS "queueLeases"`)
    return rows[0]
  }

  /** Maintenance until nothing is held, or until every lease a fault left has surely run out. */
  async recover(): Promise<DbFacts['leftovers']> {
    const bound = this.plan.drain.budgetMs + this.plan.drain.leaseGraceMs + 5_000
    let left = await this.leftovers()
    const clean = (l: DbFacts['leftovers']): boolean => Object.values(l).every((v) => v === 0)
    const giveUp = Date.now() + bound
    while (!clean(left) && Date.now() < giveUp) {
      await this.maintainers[0]!.maintain()
      left = await this.leftovers()
      if (!clean(left)) await sleep(100)
    }
    return left
  }

  async facts(leftovers: DbFacts['leftovers']): Promise<DbFacts> {
    const q = async <R>(text: string): Promise<R[]> => (await this.admin!.query(text)).rows as R[]
    const jobs = await q<{ id: string; name: string; n: number }>(
      `SELECT id::text, name, coalesce((payload->>'n')::int, (payload->'payload'->>'n')::int) AS n
       FROM "${SCHEMA}".jobs
       UNION ALL SELECT id::text, name, (payload->>'n')::int FROM "${SCHEMA}".blocked`,
    )
    const archive = await q<{ id: string; name: string; status: string; attempts: number; n: number | null }>(
      `SELECT id::text, name, status, attempts,
        coalesce((payload->>'n')::int, (payload->'payload'->>'n')::int) AS n FROM "${SCHEMA}".archive`,
    )
    const dead = await q<{ id: string; name: string; attempts: number; last_error: unknown }>(
      `SELECT id::text, name, attempts, last_error FROM "${SCHEMA}".dead_letters`,
    )
    const effects = await q<{ event_id: string; count: number }>(
      `SELECT event_id, count(*)::int AS count FROM "${SCHEMA}".${EFFECTS_TABLE} GROUP BY event_id`,
    )
    const delivered = await q<{ event_id: string; job_id: string }>(
      `SELECT event_id, job_id::text FROM "${SCHEMA}".event_deliveries`,
    )
    const stepEffects = await q<{ job_id: string; step: string; count: number }>(
      `SELECT job_id::text, step, count(*)::int AS count FROM "${SCHEMA}".${STEP_EFFECTS_TABLE} GROUP BY 1, 2`,
    )
    const steps = await q<{ job_id: string; step: string; recorded_at: number }>(
      `SELECT job_id::text, name AS step, (extract(epoch FROM finished_at) * 1000)::float8 AS recorded_at
       FROM "${SCHEMA}".job_steps WHERE state = 'completed'`,
    )
    return { jobs, archive, dead, effects, delivered, stepEffects, steps, leftovers }
  }

  async readLogs(): Promise<RunLog[]> {
    const files = (await readdir(this.logDir)).filter((f) => f.startsWith('runs-'))
    return Promise.all(files.map(async (f) => parseRunLog(await readFile(join(this.logDir, f), 'utf8'))))
  }

  /** Ends everything it started, each step whatever happened to the others. */
  async tearDown(): Promise<void> {
    this.stopping = true
    this.maintaining = false
    const steps: (() => Promise<unknown> | undefined)[] = [
      () => this.maintenanceLoop,
      () =>
        Promise.all(
          this.slots.map(async (slot) => {
            slot.expectExit = true
            if (slot.child && slot.child.exitCode === null && slot.child.signalCode === null) {
              slot.child.kill('SIGKILL')
              await slot.exited
            }
          }),
        ),
      () => Promise.all(this.slots.map((slot) => slot.proxy.close())),
      () => Promise.all(this.maintainers.map((sluice) => sluice.close())),
      () => this.admin?.end(),
      () => this.cluster?.stop(),
      () =>
        this.logDir && !this.plan.keepLogs ? rm(this.logDir, { recursive: true, force: true }) : undefined,
    ]
    const errors: unknown[] = []
    for (const step of steps) await Promise.resolve(step()).catch((error: unknown) => errors.push(error))
    if (errors.length > 0) throw new AggregateError(errors, 'Tearing down the fault suite failed')
  }
}

/** Runs the whole scenario and judges it. Every process, proxy and server it started is gone when it returns or throws. */
export async function runChaos(plan: ChaosPlan): Promise<ChaosReport> {
  const run = new ChaosRun(plan)
  const started = Date.now()
  try {
    await run.setUp()
    await run.enqueue()
    run.log(`enqueued ${run.total} jobs in ${Date.now() - started} ms`)
    const working = Date.now()
    run.workDeadline = working + plan.timeoutMs
    await run.startWorkers()
    run.startMaintenance()
    let finished = true
    try {
      await run.injectFaults()
      await run.waitForAll()
    } catch (error) {
      finished = false
      run.violations.push(`the jobs did not all finish: ${(error as Error).message}`)
    }
    const workMs = Date.now() - working
    run.log(`work done in ${workMs} ms; stopping the workers`)
    await run.stopWorkers()
    await run.stopMaintenance()
    const leftovers = await run.recover()
    const facts = await run.facts(leftovers)
    const logs = await run.readLogs()
    const { figures, violations } = analyse({
      total: run.total,
      kinds: {
        plain: plan.plain,
        keyed: plan.keyed,
        limited: plan.limited,
        steps: plan.steps,
        ledger: plan.ledger,
        events: plan.events,
      },
      faults: run.faults,
      crashes: run.crashes,
      logs,
      facts,
      finished,
    })
    figures.processes = run.processes
    figures.maintenance = run.maintenance
    figures.workMs = workMs
    figures.totalMs = Date.now() - started
    return {
      plan,
      figures,
      faults: run.faults,
      violations: [...run.violations, ...violations],
      ...(plan.keepLogs ? { logDir: run.logDir } : {}),
    }
  } finally {
    await run.tearDown()
  }
}

/** What `npm test` runs: about a minute on two busy cores. */
export const standardPlan: ChaosPlan = {
  seed: 11,
  plain: 9_000,
  keyed: 300,
  limited: 300,
  steps: 300,
  ledger: 150,
  events: 600,
  keys: 8,
  workers: 4,
  faults: { kill: 6, terminate: 4, cut: 4, restart: 2 },
  restartMode: 'fast',
  window: [0.05, 0.85],
  drain: { budgetMs: 3_000, safetyMarginMs: 500, leaseGraceMs: 500, concurrency: 10 },
  maxHandlerMs: 5,
  timeoutMs: 150_000,
}

/** `npm run chaos -- --long`: the same with bigger numbers, about five minutes. */
export const longPlan: ChaosPlan = {
  ...standardPlan,
  seed: 2026,
  plain: 90_000,
  keyed: 2_500,
  limited: 2_500,
  steps: 2_500,
  ledger: 1_000,
  events: 5_000,
  keys: 16,
  workers: 6,
  faults: { kill: 40, terminate: 20, cut: 20, restart: 8 },
  window: [0.03, 0.92],
  drain: { budgetMs: 5_000, safetyMarginMs: 500, leaseGraceMs: 1_000, concurrency: 10 },
  timeoutMs: 600_000,
}
