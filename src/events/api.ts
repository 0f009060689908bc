import * as z from 'zod/mini'
import type { Db } from '../db/types.js'
import { toIssues, ValidationError } from '../errors.js'
import { target } from '../jobs/enqueue.js'
import { jsonPath } from '../json.js'
import { nameSchema } from '../names.js'
import { replayEvents } from '../sql/replay.js'
import type { WakeOptions } from '../wake/send.js'
import { type PublishOptions, type PublishResult, preparePublish, publishAndWake } from './publish.js'
import type { AnySubscriber } from './subscriber.js'
import { writeSubscriptions } from './tasks.js'
import { patternRegex, patternSchema, wordsMatch } from './topics.js'

export interface ReplayQuery {
  eventId?: string
  subscriber?: string
  /** A topic pattern (`orders.#`): the dead-lettered events whose topic it matches. */
  topic?: string
  /** At most this many jobs per call. Default 1,000. */
  limit?: number
}

export interface EventsApi {
  /**
   * Publishes an event in one statement: one job per subscription whose pattern matches the
   * topic, none for an event id published before. With `tx`, inside the caller's transaction.
   */
  publish(topic: string, payload: unknown, options?: PublishOptions): Promise<PublishResult>
  /** Dead-lettered subscriber jobs back to their queues (attempts reset): by event id or filter. Returns their ids. */
  replay(query: string | ReplayQuery): Promise<string[]>
  /** Writes the subscriptions from code (also done by migrate() and by maintenance). */
  syncSubscriptions(): Promise<void>
}

const replaySchema = z.lazy(() =>
  z.strictObject({
    eventId: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
    subscriber: z.optional(nameSchema),
    topic: z.optional(patternSchema),
    limit: z.optional(z.int().check(z.minimum(1), z.maximum(10_000))),
  }),
)

/** What the event bus needs of the resolved config (src/config.ts, a layer above, passes all of it). */
export interface EventsConfig {
  readonly subscribers: readonly AnySubscriber[]
  readonly syncSubscriptions: boolean
  readonly maxPayloadBytes: number
  readonly wake: Readonly<WakeOptions>
}

export function eventsApi(db: () => Promise<Db>, t: string, config: EventsConfig): EventsApi {
  const local = config.subscribers.map((s) => ({ sub: s, words: s.subscriber.topic.split('.') }))
  /** The payload must fit every registered subscriber the topic reaches: bad input changes nothing. */
  const checkPayload = (topic: string, payload: unknown): void => {
    const topicWords = topic.split('.')
    for (const { sub, words } of local) {
      if (!wordsMatch(words, topicWords)) continue
      const parsed = z.safeParse(sub.subscriber.payload, payload)
      if (parsed.success) continue
      const issues = toIssues(parsed.error.issues)
      throw new ValidationError(
        `The payload for topic "${topic}" does not fit subscriber "${sub.name}" at ${jsonPath('payload', issues[0]?.path ?? [])}: ${issues[0]?.message}`,
        issues.map((issue) => ({ ...issue, path: ['payload', ...issue.path] })),
      )
    }
  }
  return {
    async publish(topic, payload, options = {}) {
      const event = preparePublish(topic, payload, options, config.maxPayloadBytes)
      checkPayload(topic, payload)
      const on = target(await db(), options.tx)
      return publishAndWake(on, t, event, config.wake, options.tx !== undefined)
    },
    async replay(query) {
      const parsed = replaySchema.safeParse(typeof query === 'string' ? { eventId: query } : query)
      if (!parsed.success) {
        const first = parsed.error.issues[0]
        throw new ValidationError(
          `Invalid replay filter: ${first?.path.join('.')} ${first?.message}`,
          toIssues(parsed.error.issues),
        )
      }
      const q = parsed.data
      const { rows } = await (await db()).query<{ id: string }>(
        replayEvents(t, {
          ...(q.eventId ? { eventId: q.eventId } : {}),
          ...(q.subscriber ? { subscriber: q.subscriber } : {}),
          ...(q.topic ? { topicRegex: patternRegex(q.topic) } : {}),
          limit: q.limit ?? 1000,
        }),
      )
      return rows.map((r) => r.id)
    },
    async syncSubscriptions() {
      if (config.syncSubscriptions) await writeSubscriptions(await db(), t, config.subscribers)
    },
  }
}
