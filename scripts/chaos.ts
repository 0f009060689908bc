/**
 * The fault suite from the command line: `npm run chaos` runs the plan `npm test` runs,
 * `npm run chaos -- --long` the soak. Prints the figures; exits 1 when a promise broke.
 *
 *   --long        bigger numbers (see longPlan in test/chaos/scenario.ts)
 *   --seed N      another fault plan
 *   --jobs N      plain jobs (the other kinds keep their share)
 *   --workers N   drain processes
 *   --crash       restart the server as a crash (immediate shutdown) instead of a clean restart
 *   --keep        keep the workers' records and print where they are
 *   --json        print the report as JSON
 */
import { parseArgs } from 'node:util'
import { type ChaosPlan, longPlan, runChaos, standardPlan } from '../test/chaos/scenario.js'

const { values } = parseArgs({
  options: {
    long: { type: 'boolean', default: false },
    seed: { type: 'string' },
    jobs: { type: 'string' },
    workers: { type: 'string' },
    crash: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
})

const base = values.long ? longPlan : standardPlan
const scale = values.jobs ? Number(values.jobs) / base.plain : 1
const plan: ChaosPlan = {
  ...base,
  ...(values.seed ? { seed: Number(values.seed) } : {}),
  ...(values.workers ? { workers: Number(values.workers) } : {}),
  plain: Math.round(base.plain * scale),
  keyed: Math.round(base.keyed * scale),
  limited: Math.round(base.limited * scale),
  ledger: Math.round(base.ledger * scale),
  events: Math.round(base.events * scale),
  restartMode: values.crash ? 'immediate' : base.restartMode,
  keepLogs: values.keep,
  log: (line) => console.error(`[chaos +${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}`),
}
const t0 = Date.now()
const report = await runChaos(plan)
if (values.json) console.log(JSON.stringify(report, null, 2))
else {
  const f = report.figures
  const rows: [string, string | number][] = [
    [
      'command',
      `npm run chaos --${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`,
    ],
    ['seed', plan.seed],
    [
      'jobs',
      `${f.jobs} (${f.byKind.plain} plain, ${f.byKind.keyed} keyed, ${f.byKind.limited} limited, ${f.byKind.steps} of steps, ${f.byKind.ledger} ledger, ${f.byKind.events} events)`,
    ],
    ['drain processes', `${plan.workers} at a time, ${f.processes} started`],
    ['drain calls', `${f.drainCalls} (${f.drainCallsFailed} failed)`],
    ['processes SIGKILLed', `${f.faults.kills} (${f.faults.killsMidRun} stopped a running handler)`],
    ['pg_terminate_backend', `${f.faults.terminations} times, ${f.faults.backendsTerminated} backends`],
    ['TCP cuts', `${f.faults.cuts} times, ${f.faults.connectionsCut} connections`],
    ['server restarts', `${f.faults.restarts} (${plan.restartMode})`],
    [
      'maintain() calls',
      `${f.maintenance.calls} (${f.maintenance.overlapping} overlapping rounds, ${f.maintenance.failed} failed)`,
    ],
    ['handler runs', f.runs],
    ['re-runs', f.reRuns],
    [
      '  by cause',
      Object.entries(f.reRunsByCause)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
    ],
    ['  after the handler finished', f.reRunsAfterFinish],
    ['failed runs (retried)', f.failedRuns],
    ['lost', f.lost],
    ['overlapping runs', f.overlaps],
    ['re-runs inside a lease', f.insideLease],
    ['dead-lettered', f.deadLettered],
    ['effects missing / duplicated', `${f.effectsMissing} / ${f.effectsDuplicated}`],
    ['step.transaction effects not once', f.stepEffectsWrong],
    ['ledger jobs out of order', f.ledgerOutOfOrder],
    ['completed steps run again', f.completedStepsReRun],
    ['plain steps run twice (crash)', f.plainStepsRepeated],
    ['left leased after recovery', f.leftBehind],
    ['time', `${(f.workMs / 1000).toFixed(1)} s of work, ${(f.totalMs / 1000).toFixed(1)} s in all`],
  ]
  for (const [k, v] of rows) console.log(`${k.padEnd(30)} ${v}`)
  if (report.logDir) console.log(`records kept in ${report.logDir}`)
  for (const v of report.violations) console.log(`\nVIOLATION: ${v}`)
}
process.exit(report.violations.length === 0 ? 0 : 1)
