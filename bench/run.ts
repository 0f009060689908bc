/**
 * Sluice benchmark runner: `npm run bench -- [--quick|--full] [--only a,b] [--write-readme]`.
 * Creates a fresh database (on DATABASE_URL, or an embedded cluster when it is unset), runs the
 * scenarios in bench/scenarios/, prints tables, writes bench/results/<timestamp>.json and,
 * with --write-readme, the results section of bench/README.md.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { provision } from './lib/database.js'
import { describeMachine, machineLine } from './lib/machine.js'
import { pool } from './lib/pg.js'
import { markdownReport, printReport, type ScenarioReport, writeBetweenMarkers } from './lib/report.js'
import { evaluateTargets } from './lib/targets.js'
import type { Measurement, Size } from './lib/types.js'
import { scenarios } from './scenarios/index.js'

const here = dirname(fileURLToPath(import.meta.url))

function options(): {
  size: Size
  only: string[] | undefined
  writeReadme: boolean
  note: string | undefined
} {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      full: { type: 'boolean', default: false },
      only: { type: 'string' },
      'write-readme': { type: 'boolean', default: false },
      /** A line saying what was measured (e.g. which revision of src/), kept in the JSON and the README. */
      note: { type: 'string' },
    },
    strict: true,
  })
  if (values.quick && values.full) throw new Error('Pass --quick or --full, not both.')
  const only = values.only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const known = scenarios.map((s) => s.name)
  const unknown = only?.filter((name) => !known.includes(name)) ?? []
  if (unknown.length > 0)
    throw new Error(`Unknown scenario ${unknown.join(', ')}; known: ${known.join(', ')}`)
  return {
    size: values.quick ? 'quick' : 'full',
    only,
    writeReadme: values['write-readme'],
    note: values.note,
  }
}

async function main(): Promise<void> {
  const opts = options()
  const started = new Date()
  const log = (message: string): void => {
    const s = ((Date.now() - started.getTime()) / 1000).toFixed(1).padStart(6)
    process.stderr.write(`[${s}s] ${message}\n`)
  }
  const db = await provision(log)
  const stop = (): void => {
    db.release().finally(() => process.exit(130))
  }
  process.once('SIGINT', stop)
  const admin = pool(db.url, 4)
  const reports: ScenarioReport[] = []
  const all: Measurement[] = []
  try {
    const machine = await describeMachine(admin)
    log(machineLine(machine))
    for (const scenario of scenarios) {
      if (opts.only && !opts.only.includes(scenario.name)) continue
      log(`scenario ${scenario.name}`)
      const result = await scenario.run({ size: opts.size, url: db.url, admin, log, earlier: all })
      all.push(...result.measurements)
      reports.push({ name: scenario.name, title: scenario.title, ...result })
    }
    const targets = evaluateTargets(all)
    const command = `${db.origin === 'DATABASE_URL' ? 'DATABASE_URL=… ' : ''}npm run bench -- --${opts.size}${
      opts.only ? ` --only ${opts.only.join(',')}` : ''
    }`
    console.log(`Sluice benchmark, ${opts.size} size, ${started.toISOString()}`)
    console.log(`Machine: ${machineLine(machine)}`)
    console.log(
      `Database: fresh database on ${db.origin === 'DATABASE_URL' ? 'DATABASE_URL' : 'an embedded cluster'}`,
    )
    console.log(printReport(reports, targets))

    const stamp = started.toISOString().replace(/[:.]/g, '-')
    const out = join(here, 'results', `${stamp}.json`)
    await mkdir(dirname(out), { recursive: true })
    await writeFile(
      out,
      `${JSON.stringify({ startedAt: started.toISOString(), size: opts.size, command, note: opts.note, database: db.origin, machine, scenarios: reports, targets }, null, 2)}\n`,
    )
    log(`wrote ${out}`)
    if (opts.writeReadme) {
      const md = markdownReport(reports, targets, [
        `Run ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${opts.size} size: \`${command}\``,
        '',
        `Machine: ${machineLine(machine)}; fresh database on ${db.origin === 'DATABASE_URL' ? 'that server' : 'an embedded cluster'}.`,
        ...(opts.note ? ['', opts.note] : []),
      ])
      await writeBetweenMarkers(join(here, 'README.md'), md)
      log('updated bench/README.md')
    }
  } finally {
    await admin.end()
    await db.release()
    process.removeListener('SIGINT', stop)
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
