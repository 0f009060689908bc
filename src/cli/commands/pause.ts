import { assertName } from '../../names.js'
import { defineCommand } from '../command.js'
import { UsageError } from '../errors.js'

interface Args {
  queue: string
}

interface Result {
  queue: string
  paused: boolean
  /** resume only: false when the queue had no stored state (it was not paused). */
  known?: boolean
}

function queueArg(command: string, positionals: readonly string[]): Args {
  const [queue, ...extra] = positionals
  if (!queue) throw new UsageError(`${command} needs a queue name.`, `Example: sluice ${command} emails`)
  if (extra.length)
    throw new UsageError(`Unexpected argument "${extra[0]}".`, `sluice ${command} takes one queue.`)
  try {
    return { queue: assertName('queue', queue) }
  } catch (error) {
    throw new UsageError((error as Error).message, 'Queue names are letters, digits, "_", "-", "." or ":".')
  }
}

export const pause = defineCommand<Args, Result>({
  name: 'pause',
  summary: 'stop drains from claiming a queue until it is resumed',
  usage: 'sluice pause <queue>',
  help: `Pauses a queue by hand: drains skip it until \`sluice resume <queue>\`, whatever its
circuit breaker does, across deploys and maintenance. Jobs already running finish; new
jobs are still accepted and wait.`,
  options: {},
  needsSchema: true,
  parse: ({ positionals }) => queueArg('pause', positionals),
  async run({ sluice }, { queue }) {
    await sluice.pause(queue)
    return { queue, paused: true }
  },
  render: (r) => `Paused queue ${r.queue}: drains skip it until \`sluice resume ${r.queue}\`.`,
})

export const resume = defineCommand<Args, Result>({
  name: 'resume',
  summary: 'lift a pause (and close the circuit breaker) on a queue',
  usage: 'sluice resume <queue>',
  help: `Lifts a manual pause on a queue and closes its circuit breaker, so drains claim from it
again at once.`,
  options: {},
  needsSchema: true,
  parse: ({ positionals }) => queueArg('resume', positionals),
  async run({ sluice }, { queue }) {
    const known = await sluice.resume(queue)
    return { queue, paused: false, known }
  },
  render: (r) =>
    r.known ? `Resumed queue ${r.queue}.` : `Queue ${r.queue} has no stored state: it was not paused.`,
})
