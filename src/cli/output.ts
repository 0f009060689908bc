import type { Explained } from './errors.js'

/** Writes and waits until the text is handed to the OS, so an exit right after loses nothing. */
export function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  if (!text) return Promise.resolve()
  return new Promise((resolve) => {
    stream.write(text.endsWith('\n') ? text : `${text}\n`, () => resolve())
  })
}

/**
 * With --json, stdout carries exactly one JSON document: whatever handlers or libraries
 * print through console.log and friends goes to stderr for the duration.
 */
export function keepStdoutForJson(): void {
  const toStderr = (...args: unknown[]): void => {
    console.error(...args)
  }
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr
  console.table = toStderr
}

const colorful = (stream: NodeJS.WriteStream): boolean =>
  stream.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb'

const paint =
  (code: number) =>
  (text: string, stream: NodeJS.WriteStream = process.stdout) =>
    colorful(stream) ? `\x1b[${code}m${text}\x1b[0m` : text

export const color = {
  bold: paint(1),
  dim: paint(2),
  red: paint(31),
  green: paint(32),
  yellow: paint(33),
  cyan: paint(36),
}

/** A plain text table: left-aligned text, right-aligned numbers, two spaces between columns. */
export function table(headers: string[], rows: (string | number)[][], indent = '  '): string {
  if (rows.length === 0) return `${indent}(none)`
  const cells = rows.map((row) => row.map((cell) => String(cell)))
  const numeric = headers.map((_, i) => rows.every((row) => typeof row[i] === 'number' || row[i] === '—'))
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]?.length ?? 0)))
  const line = (row: string[]) =>
    indent +
    row
      .map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [line(headers), ...cells.map(line)].join('\n')
}

/** 0.4 s, 12 s, 3 min, 2 h 5 min, 3 d */
export function duration(ms: number): string {
  const abs = Math.abs(ms)
  if (abs < 1_000) return `${Math.round(ms)} ms`
  if (abs < 10_000) return `${(ms / 1_000).toFixed(1)} s`
  if (abs < 60_000) return `${Math.round(ms / 1_000)} s`
  if (abs < 3_600_000) return `${Math.round(ms / 60_000)} min`
  if (abs < 86_400_000) {
    const h = Math.floor(abs / 3_600_000)
    const m = Math.round((abs % 3_600_000) / 60_000)
    return `${ms < 0 ? '-' : ''}${h} h${m ? ` ${m} min` : ''}`
  }
  return `${Math.round(ms / 86_400_000)} d`
}

/** How long ago (or, for a future moment, in how long) a timestamp is, from now. */
export function relative(at: string | null | undefined, now = Date.now()): string {
  if (!at) return '—'
  const ms = new Date(at).getTime() - now
  return ms >= 0 ? `in ${duration(ms)}` : `${duration(-ms)} ago`
}

/**
 * When something scheduled is due, from now: `in 30 s`, `due now` (up to a second late: the
 * moment it became due, not a past event), `overdue by 2 min`.
 */
export function dueIn(at: string | null | undefined, now = Date.now()): string {
  if (!at) return '—'
  const ms = new Date(at).getTime() - now
  if (ms > 0) return `in ${duration(ms)}`
  return ms >= -1_000 ? 'due now' : `overdue by ${duration(-ms)}`
}

export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ')
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** A failure as a person reads it: the sentence, the issues with their paths, then the hint. */
export function formatError(error: Explained): string {
  const lines = [`sluice: ${error.message}`]
  for (const issue of error.issues ?? []) {
    lines.push(`  ${issue.path.length ? issue.path.join('.') : '(input)'}: ${issue.message}`)
  }
  if (error.hint) lines.push(`hint: ${error.hint}`)
  return lines.join('\n')
}

/** `1 due job`, `2 due jobs`: a count and its noun, singular for exactly one. */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`
}
