import type { AnyJob } from '../jobs/define.js'
import { closest } from '../names.js'
import { CliError, EXIT } from './errors.js'

/** The error for a job name the app does not define; subscribers are left out (they cannot be enqueued). */
export function unknownJob(name: string, definitions: readonly AnyJob[]): CliError {
  const jobs = definitions.filter((j) => !j.subscriber)
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

/** The error for `sluice enqueue <subscriber>`: its jobs are written by publishing a matching event. */
export function notEnqueueable(name: string, topic: string): CliError {
  return new CliError(
    `"${name}" is a subscriber: its jobs are written by publishing an event to a topic it matches, not by enqueue.`,
    {
      code: 'INVALID_INPUT',
      exitCode: EXIT.USAGE,
      hint: `Publish to a topic matching "${topic}": sluice publish <topic> '<payload json>'.`,
    },
  )
}

export function unknownQueue(queue: string, queues: readonly string[], more = ''): CliError {
  const guess = closest(queue, queues)
  return new CliError(`No job of this app uses queue "${queue}".`, {
    code: 'UNKNOWN_QUEUE',
    exitCode: EXIT.USAGE,
    hint: `${guess ? `Did you mean "${guess}"? ` : ''}Queues: ${queues.join(', ') || '(none)'}.${more ? ` ${more}` : ''}`,
  })
}
