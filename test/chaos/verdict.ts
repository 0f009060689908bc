/**
 * Judges a fault run: reads what the workers recorded, what the database holds and which
 * faults were injected, and lists every broken promise.
 *
 * Attribution, precisely: runs of one job are ordered by start time; each run after the
 * first is a re-run of the one before it (R1, then R2). R2 is attributed to a fault F when
 *   - F hit the process that ran R1: F killed it, terminated its backends or cut its proxied
 *     connections; a server restart hits every process;
 *   - and F happened between the start of the drain call that ran R1 and the start of R2
 *     (a restart counts from when the server went down to when it was up again).
 * The earliest such fault is the cause. Failing that, R2 is an ordinary retry when the drain
 * reported R1 failed by its timeout and R1's handler really had not returned by its deadline
 * (on a starved machine a handler can miss it): cause `timeout`. Anything else is a violation:
 * nothing the suite did explains it. Separately, a run the drain counted as timed out although
 * its handler ended before its deadline is a violation whatever else happened.
 */

export type Fault =
  /** `stopped`: runs the kill left unfinished (as the worker's file shows them). */
  | { kind: 'kill'; at: number; slot: number; pid: number; stopped: number }
  | { kind: 'terminate' | 'cut'; at: number; slot: number; pid: number; hit: number }
  | { kind: 'restart'; at: number; end: number; mode: 'fast' | 'immediate' }

/** One handler run, as its worker recorded it. */
export interface Run {
  id: string
  attempt: number
  pid: number
  slot: number
  /** When the drain call that ran it started, and the earliest its lease could end. */
  callStart: number
  leaseFloor: number
  start: number
  /** When its signal fires: the job's timeout or the drain's deadline. */
  deadline: number
  end?: number
  /** `ok`, or the name of what the handler threw. */
  how?: string
  /** The drain's outcome when not completed (`retrying`, `dead-lettered`, `expired`), with its error. */
  outcome?: string
  error?: string
  message?: string
}

/** A plain step's effect, as a worker reported it. */
export interface StepEffect {
  id: string
  step: string
  at: number
}

export interface RunLog {
  pid: number
  slot: number
  runs: Run[]
  drainCalls: number
  drainErrors: { at: number; message: string }[]
  lostLeases: number
  /** Lines that could not be read (a write torn by a kill). */
  unreadable: number
  /** The plain steps' effects it reported. */
  stepEffects: StepEffect[]
}

/** Reads one worker's file (see worker.ts for the format). */
export function parseRunLog(text: string): RunLog {
  const log: RunLog = {
    pid: 0,
    slot: -1,
    runs: [],
    drainCalls: 0,
    drainErrors: [],
    lostLeases: 0,
    unreadable: 0,
    stepEffects: [],
  }
  const open = new Map<string, Run>()
  let callStart = 0
  let leaseFloor = 0
  for (const line of text.split('\n')) {
    if (line === '') continue
    const f = line.split(' ')
    const rest = (i: number): string => {
      try {
        return JSON.parse(f.slice(i).join(' ')) as string
      } catch {
        return f.slice(i).join(' ')
      }
    }
    switch (f[0]) {
      case 'P':
        log.pid = Number(f[1])
        log.slot = Number(f[2])
        break
      case 'D':
        log.drainCalls++
        callStart = Number(f[1])
        leaseFloor = Number(f[2])
        break
      case 'S': {
        const run: Run = {
          id: f[1]!,
          attempt: Number(f[2]),
          pid: log.pid,
          slot: log.slot,
          callStart,
          leaseFloor,
          start: Number(f[3]),
          deadline: Number(f[4]),
        }
        log.runs.push(run)
        open.set(`${run.id}/${run.attempt}`, run)
        break
      }
      case 'E': {
        const run = open.get(`${f[1]}/${f[2]}`)
        if (run) {
          run.end = Number(f[3])
          run.how = f[4]
        } else log.unreadable++
        break
      }
      case 'F': {
        const run = open.get(`${f[1]}/${f[2]}`)
        if (run) {
          run.outcome = f[3]
          run.error = f[4]
          run.message = rest(5)
        } else log.unreadable++
        break
      }
      case 'R':
        log.lostLeases += Number(f[6])
        break
      case 'T':
        log.stepEffects.push({ id: f[1]!, step: f[2]!, at: Number(f[3]) })
        break
      case '#':
        break
      case 'X':
        log.drainErrors.push({ at: Number(f[1]), message: rest(2) })
        break
      default:
        log.unreadable++
    }
  }
  return log
}

export interface DbFacts {
  /** Jobs still waiting, leased or blocked. */
  jobs: { id: string; name: string; n: number }[]
  archive: { id: string; name: string; status: string; attempts: number; n: number | null }[]
  dead: { id: string; name: string; attempts: number; last_error: unknown }[]
  /** Effects written by the exactly-once subscriber, per event. */
  effects: { event_id: string; count: number }[]
  delivered: { event_id: string; job_id: string }[]
  /** The step jobs' transactional effects, per job and step. */
  stepEffects: { job_id: string; step: string; count: number }[]
  /** The step jobs' recorded steps: when each record was written (epoch ms). */
  steps: { job_id: string; step: string; recorded_at: number }[]
  leftovers: {
    jobs: number
    leased: number
    blocked: number
    invocations: number
    uniqueLocks: number
    semaphoreSlots: number
    queueLeases: number
  }
}

/** What explains a re-run: an injected fault, or a retry after a genuine timeout. */
export type Cause = Fault['kind'] | 'timeout' | 'suspended'

export interface ChaosFigures {
  jobs: number
  byKind: { plain: number; keyed: number; limited: number; steps: number; ledger: number; events: number }
  processes: number
  faults: {
    kills: number
    /** Kills that stopped a running handler. */
    killsMidRun: number
    terminations: number
    backendsTerminated: number
    cuts: number
    connectionsCut: number
    restarts: number
  }
  maintenance: { calls: number; failed: number; overlapping: number; tasksRun: number }
  drainCalls: number
  drainCallsFailed: number
  lostLeases: number
  runs: number
  /** Runs after a job's first: each attributed to the fault that caused it. */
  reRuns: number
  reRunsByCause: Record<Cause | 'unattributed', number>
  /** Re-runs whose earlier run had finished its handler: only the settle was lost. */
  reRunsAfterFinish: number
  /** Runs the drain reported as failed (retried): a fault cut their handler's own statement. */
  failedRuns: number
  lost: number
  overlaps: number
  insideLease: number
  deadLettered: number
  effectsMissing: number
  effectsDuplicated: number
  /** Step jobs' transactional effects missing or written more than once. */
  stepEffectsWrong: number
  /** Ledger jobs (a single-consumer queue) started before the one before them had returned. */
  ledgerOutOfOrder: number
  /** Plain steps run again after their record was written. */
  completedStepsReRun: number
  /** Plain steps run more than once: at least once, each a crash between effect and record. */
  plainStepsRepeated: number
  leftBehind: number
  workMs: number
  totalMs: number
}

/** What a crashed process printed, without stack frames and object dumps. */
function gist(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^\s+(at |\[|[a-zA-Z]+: )/.test(line) && !/^\s*[}^]/.test(line))
    .join(' | ')
    .slice(0, 600)
}

/** Whether `fault` hit the process `pid`. */
function hits(fault: Fault, pid: number): boolean {
  return fault.kind === 'restart' || fault.pid === pid
}

export function analyse(input: {
  total: number
  kinds: ChaosFigures['byKind']
  faults: Fault[]
  crashes: {
    slot: number
    pid: number
    at: number
    code: number | null
    signal: string | null
    stderr: string
  }[]
  logs: RunLog[]
  facts: DbFacts
  finished: boolean
}): { figures: ChaosFigures; violations: string[] } {
  const { faults, logs, facts } = input
  const violations: string[] = []
  const report = (kind: string, items: string[]): void => {
    if (items.length === 0) return
    const shown = items.slice(0, 10).join('\n  ')
    violations.push(
      `${kind} (${items.length}):\n  ${shown}${items.length > 10 ? `\n  … ${items.length - 10} more` : ''}`,
    )
  }

  const deaths = new Map<number, number>()
  for (const fault of faults) if (fault.kind === 'kill') deaths.set(fault.pid, fault.at)
  for (const crash of input.crashes) deaths.set(crash.pid, crash.at)
  report(
    'worker processes that died without being killed',
    input.crashes.map(
      (c) => `pid ${c.pid} (slot ${c.slot}): code ${c.code}, signal ${c.signal}: ${gist(c.stderr)}`,
    ),
  )

  const runsById = new Map<string, Run[]>()
  for (const log of logs) {
    for (const run of log.runs) {
      const list = runsById.get(run.id)
      if (list) list.push(run)
      else runsById.set(run.id, [run])
    }
  }
  for (const list of runsById.values()) list.sort((a, b) => a.start - b.start || a.attempt - b.attempt)

  // Nothing lost: every job completed and archived, once.
  const archived = new Map<number, DbFacts['archive'][number]>()
  const twice: string[] = []
  for (const row of facts.archive) {
    if (row.n === null) continue
    if (archived.has(row.n)) twice.push(`job #${row.n} (id ${row.id})`)
    archived.set(row.n, row)
  }
  report('jobs archived twice', twice)
  const where = new Map<number, string>()
  for (const row of facts.jobs) where.set(row.n, `still queued or blocked as id ${row.id} (${row.name})`)
  const lost: string[] = []
  for (let n = 0; n < input.total; n++) {
    const row = archived.get(n)
    if (row?.status !== 'completed') {
      lost.push(`job #${n}: ${row ? `archived as ${row.status}` : (where.get(n) ?? 'not in the archive')}`)
    }
  }
  report('jobs not completed (lost)', lost)
  report(
    'jobs dead-lettered',
    facts.dead.map(
      (d) => `id ${d.id} (${d.name}) after ${d.attempts} attempts: ${JSON.stringify(d.last_error)}`,
    ),
  )

  // Exactly-once effects for the subscriber that writes with ctx.transaction.
  const effects = new Map(facts.effects.map((e) => [e.event_id, e.count]))
  const effectsMissing: string[] = []
  const effectsDuplicated: string[] = []
  for (const { event_id } of facts.delivered) {
    const count = effects.get(event_id) ?? 0
    if (count === 0) effectsMissing.push(event_id)
    if (count > 1) effectsDuplicated.push(`${event_id}: ${count} times`)
  }
  if (facts.delivered.length !== input.kinds.events) {
    violations.push(
      `${facts.delivered.length} events delivered to the subscriber, ${input.kinds.events} published`,
    )
  }
  report('events whose effect was never written', effectsMissing)
  report('events whose effect was written more than once', effectsDuplicated)

  // Durable steps: each transactional step's effect exactly once per completed step job; no plain
  // step run again once its record was written.
  const stepJobs = facts.archive.filter((r) => r.name === 'chaos-steps' && r.status === 'completed')
  const txCounts = new Map(facts.stepEffects.map((e) => [`${e.job_id} ${e.step}`, e.count]))
  const stepEffectsWrong: string[] = []
  for (const job of stepJobs) {
    for (const step of ['tx-0', 'tx-1']) {
      const count = txCounts.get(`${job.id} ${step}`) ?? 0
      if (count !== 1) stepEffectsWrong.push(`job ${job.id} step ${step}: written ${count} times`)
    }
  }
  if (stepJobs.length !== input.kinds.steps) {
    violations.push(`${stepJobs.length} step jobs completed, ${input.kinds.steps} enqueued`)
  }
  const recordedAt = new Map(facts.steps.map((r) => [`${r.job_id} ${r.step}`, r.recorded_at]))
  const completedStepsReRun: string[] = []
  const plainRuns = new Map<string, number>()
  for (const log of logs) {
    for (const e of log.stepEffects) {
      const key = `${e.id} ${e.step}`
      plainRuns.set(key, (plainRuns.get(key) ?? 0) + 1)
      const at = recordedAt.get(key)
      if (at !== undefined && e.at > at)
        completedStepsReRun.push(
          `job ${e.id} step ${e.step}: ran at ${e.at}, recorded at ${at} (pid ${log.pid})`,
        )
    }
  }
  // The single-consumer queue: each ledger job starts only once the one enqueued before it has
  // returned, through every fault (docs/controls.md): a dead holder's jobs go back at their
  // places, and no later job starts while they may still run.
  const ledger = facts.archive
    .filter((r) => r.name === 'chaos-ledger' && r.n !== null)
    .sort((a, b) => a.n! - b.n!)
  if (ledger.length !== input.kinds.ledger) {
    violations.push(`${ledger.length} ledger jobs archived, ${input.kinds.ledger} enqueued`)
  }
  const ledgerOutOfOrder: string[] = []
  for (let i = 1; i < ledger.length; i++) {
    const ends = (runsById.get(ledger[i - 1]!.id) ?? []).filter((r) => r.how === 'ok').map((r) => r.end!)
    const first = runsById.get(ledger[i]!.id)?.[0]
    const returned = ends.length > 0 ? Math.min(...ends) : undefined
    if (first && (returned === undefined || first.start < returned)) {
      ledgerOutOfOrder.push(
        `#${ledger[i]!.n} (id ${ledger[i]!.id}) started at ${first.start} in pid ${first.pid}; #${ledger[i - 1]!.n} ` +
          (returned === undefined ? 'never returned' : `returned at ${returned}`),
      )
    }
  }
  report('ledger jobs started before the one enqueued before them had returned', ledgerOutOfOrder)
  report('step jobs whose transactional effect was missing or duplicated', stepEffectsWrong)
  report('plain steps run again after their record was written', completedStepsReRun)

  const describe = (r: Run): string =>
    `attempt ${r.attempt} in pid ${r.pid} ${r.start}→${r.end ?? '?'} (${r.how ?? 'no end'}${r.outcome ? `, ${r.outcome}: ${r.error} ${r.message}` : ''}), deadline ${r.deadline}, drain call from ${r.callStart}, lease ≥ ${r.leaseFloor}`
  const completedSteps = new Map<string, number[]>()
  for (const r of facts.steps)
    completedSteps.set(r.job_id, [...(completedSteps.get(r.job_id) ?? []), r.recorded_at])
  /**
   * A run of steps that completed a step and then reached its time limit is put back by its own
   * statement, attempt uncounted, before the drain reports it: a kill, or a connection cut before
   * that statement's reply, leaves the run in the worker's file without 'suspended'. Such a run
   * is told by the run after it: the same attempt, started after the limit.
   */
  const putBackUnreported = (row: { id: string; name: string }, r: Run, after: Run | undefined): boolean =>
    row.name === 'chaos-steps' &&
    after !== undefined &&
    after.attempt === r.attempt &&
    after.start >= r.deadline &&
    (completedSteps.get(row.id) ?? []).some((at) => at >= r.start && at <= r.deadline)
  const noRunFinished: string[] = []
  const moreRunsThanClaims: string[] = []
  for (const row of facts.archive) {
    const runs = runsById.get(row.id) ?? []
    // A subscriber job re-delivered after its effect committed completes without running.
    if (row.name !== 'chaos-effect' && !runs.some((r) => r.how === 'ok')) {
      noRunFinished.push(`id ${row.id} (${row.name}): ${runs.length} runs, none returned`)
    }
    // A run of steps put back after progress does not count its attempt (docs/steps.md).
    const counted = runs.filter(
      (r, i) => r.outcome !== 'suspended' && !putBackUnreported(row, r, runs[i + 1]),
    ).length
    if (counted > row.attempts)
      moreRunsThanClaims.push(
        `id ${row.id} (${row.name}): ${counted} runs, ${row.attempts} claims: ${runs.map(describe).join('; ')}`,
      )
  }
  report('jobs archived as completed although no run of them returned', noRunFinished)
  report('jobs that ran more often than they were claimed', moreRunsThanClaims)
  // Overlaps, leases and attribution, pair by pair.
  const overlaps: string[] = []
  const insideLease: string[] = []
  const unattributed: string[] = []
  const lateVerdicts: string[] = []
  const byCause: ChaosFigures['reRunsByCause'] = {
    kill: 0,
    terminate: 0,
    cut: 0,
    restart: 0,
    timeout: 0,
    suspended: 0,
    unattributed: 0,
  }
  const timedOut = (r: Run): boolean => r.outcome !== undefined && r.error === 'JobTimeoutError'
  /** The handler ended (returned or threw) before its signal was due: no timeout can have stopped it. */
  const endedInTime = (r: Run): boolean => r.end !== undefined && r.end < r.deadline
  for (const log of logs) {
    for (const r of log.runs) {
      if (timedOut(r) && endedInTime(r)) {
        lateVerdicts.push(
          `job ${r.id}: ${describe(r)}: returned ${r.deadline - r.end!} ms before its deadline`,
        )
      }
    }
  }
  let reRuns = 0
  let reRunsAfterFinish = 0
  for (const [id, runs] of runsById) {
    for (let i = 1; i < runs.length; i++) {
      const first = runs[i - 1]!
      const again = runs[i]!
      reRuns++
      if (first.how === 'ok') reRunsAfterFinish++
      const firstEnd = first.end ?? deaths.get(first.pid) ?? Number.POSITIVE_INFINITY
      if (again.start < firstEnd) overlaps.push(`job ${id}: ${describe(first)} overlaps ${describe(again)}`)
      if (first.outcome === undefined && again.start < first.leaseFloor) {
        insideLease.push(`job ${id}: ${describe(again)} started inside the lease of ${describe(first)}`)
      }
      const cause = faults.find(
        (f) =>
          hits(f, first.pid) &&
          f.at <= again.start &&
          (f.kind === 'restart' ? f.end : f.at) >= first.callStart,
      )
      if (cause) byCause[cause.kind]++
      else if (first.outcome === 'suspended') byCause.suspended++
      else if (timedOut(first) && !endedInTime(first)) byCause.timeout++
      else {
        byCause.unattributed++
        const errors = logs
          .find((l) => l.pid === first.pid)
          ?.drainErrors.filter((e) => e.at >= first.callStart && e.at <= again.start)
          .map((e) => e.message)
        unattributed.push(
          `job ${id}: ${describe(again)} after ${describe(first)}; drain errors in between: ${JSON.stringify(errors ?? [])}`,
        )
      }
    }
  }
  report('runs of one job that overlapped', overlaps)
  report('re-runs that started while the earlier run still held its lease', insideLease)
  report('re-runs no injected fault explains', unattributed)
  report('runs counted as timed out although their handler ended before the deadline', lateVerdicts)

  const left = facts.leftovers
  const leftBehind = Object.values(left).reduce((a, b) => a + b, 0)
  if (leftBehind > 0) violations.push(`left behind after recovery: ${JSON.stringify(left)}`)
  const unreadable = logs.reduce((a, l) => a + l.unreadable, 0)
  if (unreadable > 0) violations.push(`${unreadable} unreadable lines in the workers' records`)

  const count = (kind: Fault['kind']): Fault[] => faults.filter((f) => f.kind === kind)
  const hit = (kind: 'terminate' | 'cut'): number =>
    count(kind).reduce((a, f) => a + (f.kind === kind ? f.hit : 0), 0)
  const figures: ChaosFigures = {
    jobs: input.total,
    byKind: input.kinds,
    processes: 0,
    faults: {
      kills: count('kill').length,
      killsMidRun: count('kill').filter((f) => f.kind === 'kill' && f.stopped > 0).length,
      terminations: count('terminate').length,
      backendsTerminated: hit('terminate'),
      cuts: count('cut').length,
      connectionsCut: hit('cut'),
      restarts: count('restart').length,
    },
    maintenance: { calls: 0, failed: 0, overlapping: 0, tasksRun: 0 },
    drainCalls: logs.reduce((a, l) => a + l.drainCalls, 0),
    drainCallsFailed: logs.reduce((a, l) => a + l.drainErrors.length, 0),
    lostLeases: logs.reduce((a, l) => a + l.lostLeases, 0),
    runs: logs.reduce((a, l) => a + l.runs.length, 0),
    reRuns,
    reRunsByCause: byCause,
    reRunsAfterFinish,
    failedRuns: logs.reduce(
      (a, l) => a + l.runs.filter((r) => r.outcome !== undefined && r.outcome !== 'suspended').length,
      0,
    ),
    lost: lost.length,
    overlaps: overlaps.length,
    insideLease: insideLease.length,
    deadLettered: facts.dead.length,
    effectsMissing: effectsMissing.length,
    effectsDuplicated: effectsDuplicated.length,
    stepEffectsWrong: stepEffectsWrong.length,
    ledgerOutOfOrder: ledgerOutOfOrder.length,
    completedStepsReRun: completedStepsReRun.length,
    plainStepsRepeated: [...plainRuns.values()].filter((n) => n > 1).length,
    leftBehind,
    workMs: 0,
    totalMs: 0,
  }
  return { figures, violations }
}
