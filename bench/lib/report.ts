import { readFile, writeFile } from 'node:fs/promises'
import type { TargetResult } from './targets.js'
import type { Measurement, ScenarioResult } from './types.js'

export interface ScenarioReport extends ScenarioResult {
  name: string
  title: string
}

const fmt = (value: number, unit: string): string => {
  const text =
    Math.abs(value) >= 100 || Number.isInteger(value)
      ? Math.round(value).toLocaleString('en-US')
      : value.toFixed(value < 10 ? 2 : 1)
  return `${text} ${unit}`
}

const ratioText = (m: Measurement): string => (m.ratio ? `${m.ratio.value.toFixed(2)}×` : '')

const costText = (m: Measurement): string =>
  m.cost
    ? `${m.cost.serverUs === null ? '?' : Math.round(m.cost.serverUs)} + ${Math.round(m.cost.clientUs)} µs, ${Math.round(m.cost.walBytes)} B`
    : ''

function rows(report: ScenarioReport): string[][] {
  return report.measurements.map((m) => [
    m.system,
    m.label,
    m.display ?? fmt(m.value, m.unit),
    ratioText(m),
    costText(m),
  ])
}

const HEADER = ['System', 'Configuration', 'Result', 'Sluice ÷ peer', 'Per job: server + node CPU, WAL']

function textTable(header: string[], body: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n')
}

function markdownTable(header: string[], body: string[][]): string {
  const esc = (c: string): string => c.replaceAll('|', '\\|')
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...body.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n')
}

const targetRows = (targets: readonly TargetResult[]): string[][] =>
  targets.map((t) => [
    t.target,
    t.measured === null ? '—' : String(t.measured),
    t.threshold,
    t.status,
    t.detail,
  ])
const TARGET_HEADER = ['Target', 'Measured', 'Threshold', 'Status', 'From']

export function printReport(reports: readonly ScenarioReport[], targets: readonly TargetResult[]): string {
  const parts: string[] = []
  for (const r of reports) {
    parts.push(`\n== ${r.title}\n`, textTable(HEADER, rows(r)))
    for (const note of r.notes ?? []) parts.push(`  ${note}`)
  }
  parts.push('\n== Targets\n', textTable(TARGET_HEADER, targetRows(targets)))
  return parts.join('\n')
}

export function markdownReport(
  reports: readonly ScenarioReport[],
  targets: readonly TargetResult[],
  header: string[],
): string {
  const parts: string[] = [...header, '']
  for (const r of reports) {
    parts.push(`#### ${r.title}`, '', markdownTable(HEADER, rows(r)), '')
    for (const note of r.notes ?? []) parts.push(`- ${note}`)
    if (r.notes?.length) parts.push('')
  }
  parts.push('#### Targets', '', markdownTable(TARGET_HEADER, targetRows(targets)))
  return parts.join('\n')
}

const START = '<!-- results:start -->'
const END = '<!-- results:end -->'

/** Replaces whatever sits between the results markers of `path` with `body`. */
export async function writeBetweenMarkers(path: string, body: string): Promise<void> {
  const text = await readFile(path, 'utf8')
  const from = text.indexOf(START)
  const to = text.indexOf(END)
  if (from < 0 || to < from) throw new Error(`${path} has no ${START} ... ${END} markers`)
  await writeFile(path, `${text.slice(0, from + START.length)}\n${body}\n${text.slice(to)}`)
}
