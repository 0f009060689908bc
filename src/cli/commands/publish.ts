import { readFileSync } from 'node:fs'
import * as z from 'zod'
import { eventIdSchema } from '../../events/publish.js'
import { topicProblem } from '../../events/topics.js'
import { intFlag, validate } from '../args.js'
import { defineCommand } from '../command.js'
import { UsageError } from '../errors.js'

interface Args {
  topic: string
  payload: unknown
  eventId?: string
  delay?: number
  headers?: Record<string, string>
}

interface Result {
  topic: string
  eventId: string
  /** Subscriber jobs written: 0 when no subscription matched or the event id was published before. */
  jobs: number
}

const flags = z.object({
  'event-id': z.optional(eventIdSchema),
  delay: intFlag(0, 10 * 365 * 86_400_000).optional(),
  header: z
    .array(z.string().regex(/^[A-Za-z0-9_.:-]{1,64}=/, 'must be name=value'))
    .max(32)
    .optional(),
})

export const publish = defineCommand<Args, Result>({
  name: 'publish',
  summary: 'publish an event: sluice publish <topic> <json>',
  usage: 'sluice publish <topic> <json|-> [--event-id id] [--delay ms] [--header name=value]…',
  help: `Publishes an event: one job for every subscriber whose topic pattern matches <topic>.
Pass - to read the JSON payload from stdin.

  --event-id id       identifies the event: publishing it again writes nothing (default: a new UUID)
  --delay ms          subscribers run it no sooner than this many milliseconds from now
  --header name=value passed to the subscribers as ctx.event.headers (repeatable)

Example:
  sluice publish orders.created '{"orderId": "o_1"}' --event-id o_1-created`,
  options: {
    'event-id': { type: 'string' },
    delay: { type: 'string' },
    header: { type: 'string', multiple: true },
  },
  needsSchema: true,
  parse({ values, positionals }) {
    const [topic, text, ...extra] = positionals
    if (!topic || text === undefined) {
      throw new UsageError(
        'publish needs a topic and its JSON payload.',
        `Example: sluice publish orders.created '{"orderId": "o_1"}'`,
      )
    }
    if (extra.length)
      throw new UsageError(`Unexpected argument "${extra[0]}".`, 'Quote the JSON payload as one argument.')
    const problem = topicProblem(topic)
    if (problem) {
      throw new UsageError(
        `The topic "${topic.slice(0, 80)}" ${problem}.`,
        'Topics are dot-separated words, e.g. orders.created.',
      )
    }
    const v = validate('publish', flags, values)
    const source = text === '-' ? readFileSync(0, 'utf8') : text
    let payload: unknown
    try {
      payload = JSON.parse(source)
    } catch (error) {
      throw new UsageError(
        `The payload is not valid JSON: ${(error as Error).message}.`,
        `Quote it for the shell: sluice publish ${topic} '{"key": "value"}' (or pass - to read it from stdin).`,
      )
    }
    const headers = v.header?.length
      ? Object.fromEntries(v.header.map((h) => [h.slice(0, h.indexOf('=')), h.slice(h.indexOf('=') + 1)]))
      : undefined
    return {
      topic,
      payload,
      ...(v['event-id'] !== undefined ? { eventId: v['event-id'] } : {}),
      ...(v.delay !== undefined ? { delay: v.delay } : {}),
      ...(headers ? { headers } : {}),
    }
  },
  async run({ sluice }, args) {
    const result = await sluice.publish(args.topic, args.payload, {
      ...(args.eventId !== undefined ? { eventId: args.eventId } : {}),
      ...(args.delay !== undefined ? { delay: args.delay } : {}),
      ...(args.headers !== undefined ? { headers: args.headers } : {}),
    })
    return { topic: args.topic, ...result }
  },
  render: (r) =>
    r.jobs === 0
      ? `Published ${r.topic} (event ${r.eventId}): no job written (no subscriber matches, or the event id was published before).`
      : `Published ${r.topic} (event ${r.eventId}): ${r.jobs} subscriber job${r.jobs === 1 ? '' : 's'}.`,
})
