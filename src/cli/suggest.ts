import type { AnyJob } from '../jobs/define.js'
import { CliError, EXIT } from './errors.js'

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = row[j]!
      row[j] = next
    }
  }
  return row[b.length]!
}

/** The closest of `known` to `typed`, when it is close enough to be a typo. */
export function closest(typed: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(typed.length / 3)) + 1
  for (const name of known) {
    const d = distance(typed.toLowerCase(), name.toLowerCase())
    if (d < bestDistance) {
      best = name
      bestDistance = d
    }
  }
  return best
}

export function unknownJob(name: string, jobs: readonly AnyJob[]): CliError {
  const names = jobs.map((j) => j.name)
  const guess = closest(name, names)
  return new CliError(`No job named "${name}" in this app.`, {
    code: 'UNKNOWN_JOB',
    exitCode: EXIT.USAGE,
    hint: names.length
      ? `${guess ? `Did you mean "${guess}"? ` : ''}Known jobs: ${jobs.map((j) => `${j.name} (queue ${j.queue})`).join(', ')}.`
      : 'The config defines no jobs: pass them to createSluice({ jobs: [...] }).',
  })
}

export function unknownQueue(queue: string, queues: readonly string[], more = ''): CliError {
  const guess = closest(queue, queues)
  return new CliError(`No job of this app uses queue "${queue}".`, {
    code: 'UNKNOWN_QUEUE',
    exitCode: EXIT.USAGE,
    hint: `${guess ? `Did you mean "${guess}"? ` : ''}Queues: ${queues.join(', ') || '(none)'}.${more ? ` ${more}` : ''}`,
  })
}
