import { assertName } from '../../names.js'
import type { Sluice } from '../../sluice.js'
import type { Parsed } from '../args.js'
import { defineCommand } from '../command.js'
import { UsageError } from '../errors.js'
import { unknownQueue } from '../suggest.js'

interface Args {
  queue: string
  force?: boolean
}

interface Result {
  queue: string
  paused: boolean
  /** resume only: false when the queue had no stored state (it was not paused). */
  known?: boolean
}

function queueArg(command: string, { positionals, values }: Parsed): Args {
  const [queue, ...extra] = positionals
  if (!queue) throw new UsageError(`${command} needs a queue name.`, `Example: sluice ${command} emails`)
  if (extra.length)
    throw new UsageError(`Unexpected argument "${extra[0]}".`, `sluice ${command} takes one queue.`)
  let name: string
  try {
    name = assertName('queue', queue)
  } catch (error) {
    throw new UsageError((error as Error).message, 'Queue names are letters, digits, "_", "-", "." or ":".')
  }
  return values.force === true ? { queue: name, force: true } : { queue: name }
}

/**
 * Refuses a queue that no job of the app uses and that has no jobs or dead letters in the
 * database: most likely a typo, which would otherwise store a queue nobody has.
 */
async function assertKnownQueue(sluice: Sluice, queue: string): Promise<void> {
  if (sluice.config.queues.includes(queue)) return
  const inDatabase = (await sluice.inspect.queues()).map((m) => m.queue)
  if (inDatabase.includes(queue)) return
  throw unknownQueue(
    queue,
    inDatabase,
    'To pause it anyway (for jobs another app will enqueue), pass --force.',
  )
}

export const pause = defineCommand<Args, Result>({
  name: 'pause',
  summary: 'stop drains from claiming a queue until it is resumed',
  usage: 'sluice pause <queue> [--force]',
  help: `Pauses a queue by hand: drains skip it until \`sluice resume <queue>\`, whatever its
circuit breaker does, across deploys and maintenance. Jobs already running finish; new
jobs are still accepted and wait.

  --force   pause a queue that no job of this app uses and that has no jobs yet`,
  options: { force: { type: 'boolean' } },
  needsSchema: true,
  parse: (parsed) => queueArg('pause', parsed),
  async run({ sluice }, { queue, force }) {
    if (!force) await assertKnownQueue(sluice, queue)
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
  parse: (parsed) => queueArg('resume', parsed),
  async run({ sluice }, { queue }) {
    const known = await sluice.resume(queue)
    return { queue, paused: false, known }
  },
  render: (r) =>
    r.known ? `Resumed queue ${r.queue}.` : `Queue ${r.queue} has no stored state: it was not paused.`,
})
