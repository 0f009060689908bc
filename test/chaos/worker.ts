/**
 * A drain worker for the fault suite: one process that calls drain() in a loop, as a fleet of
 * function invocations would, until it gets SIGTERM (it finishes the drain in progress) or
 * its parent goes away (stdin closes). It connects through the suite's TCP proxy and names
 * its connections after itself, so the suite can cut or terminate exactly its connections.
 *
 * Everything it does goes to its own file, written synchronously so that a SIGKILL loses
 * nothing already written. One line per fact, fields separated by spaces:
 *   P <pid> <slot> <t>                         the process started
 *   D <t> <leaseFloor>                         a drain call starts; its leases last at least until leaseFloor
 *   S <job id> <attempt> <t> <deadline>        a handler starts (in the last D's drain); its signal fires at deadline
 *   E <job id> <attempt> <t> <how>             it ends: `ok` or the name of what it threw
 *   T <job id> <step> <t>                      a plain step's effect happened (a step job's)
 *   F <job id> <attempt> <outcome> <error name> <message>   the drain reported the run as not completed
 *   R <t> <claimed> <completed> <failed> <handedBack> <lostLeases> <stoppedBy>   the drain call returned
 *   X <t> <message>                            the drain call threw
 * Times are Date.now() in ms; messages are JSON strings.
 */
import { closeSync, openSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { createSluice } from '../../src/index.js'
import { chaosJobs, chaosOptions } from './jobs.js'

const env = (name: string): string => {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set`)
  return value
}

const slot = env('CHAOS_SLOT')
const schema = env('SLUICE_SCHEMA')
const budgetMs = Number(env('CHAOS_BUDGET_MS'))
const safetyMarginMs = Number(env('CHAOS_SAFETY_MARGIN_MS'))
const leaseGraceMs = Number(env('CHAOS_LEASE_GRACE_MS'))
const concurrency = Number(env('CHAOS_CONCURRENCY'))
const url = new URL(env('CHAOS_DATABASE_URL'))
url.searchParams.set('application_name', `sluice-chaos-${slot}-${process.pid}`)

const fd = openSync(join(env('CHAOS_LOG_DIR'), `runs-${slot}-${process.pid}.log`), 'a')
const write = (line: string): void => {
  writeSync(fd, `${line}\n`)
}
write(`P ${process.pid} ${slot} ${Date.now()}`)

const { jobs, subscribers } = chaosJobs(
  {
    start: (id, attempt, deadline) => write(`S ${id} ${attempt} ${Date.now()} ${deadline}`),
    end: (id, attempt, how) => write(`E ${id} ${attempt} ${Date.now()} ${how}`),
    effect: (id, step) => write(`T ${id} ${step} ${Date.now()}`),
  },
  schema,
)
const sluice = createSluice({
  ...chaosOptions,
  database: url.toString(),
  schema,
  jobs,
  subscribers,
  drain: { budgetMs, safetyMarginMs, leaseGraceMs, concurrency },
  ...(process.env.CHAOS_TRACE
    ? {
        onQuery: (q) =>
          write(
            `# ${Date.now()} ${q.durationMs} ${q.rowCount} ${JSON.stringify(q.text.slice(0, 60).replace(/\s+/g, ' '))}`,
          ),
      }
    : {}),
})

let stopping = false
process.on('SIGTERM', () => {
  stopping = true
})
// The suite holds stdin open: when it goes away, so does this worker.
process.stdin.on('end', () => process.exit(3))
process.stdin.resume()

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
process.stdout.write('ready\n')

while (!stopping) {
  const now = Date.now()
  // The drain reads its clock in the same tick: its deadline is now + budget − margin, and
  // every lease it takes runs to that deadline plus the grace, or later.
  write(`D ${now} ${now + budgetMs - safetyMarginMs + leaseGraceMs}`)
  try {
    const summary = await sluice.drain({
      onJob: (run) => {
        if (run.outcome !== 'completed') {
          const { name, message } = run.error ?? { name: '-', message: '' }
          write(`F ${run.id} ${run.attempt} ${run.outcome} ${name} ${JSON.stringify(message)}`)
        }
      },
    })
    const { claimed, completed, failed, handedBack, lostLeases, stoppedBy } = summary
    write(`R ${Date.now()} ${claimed} ${completed} ${failed} ${handedBack} ${lostLeases} ${stoppedBy}`)
    if (claimed === 0) await sleep(50)
  } catch (error) {
    write(`X ${Date.now()} ${JSON.stringify(error instanceof Error ? error.message : String(error))}`)
    await sleep(100)
  }
}
await sluice.close()
closeSync(fd)
process.exit(0)
