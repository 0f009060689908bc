import type { Hono } from 'hono'
import * as z from 'zod/mini'
import { callable } from '../callable.js'
import { ConfigError, toIssues } from '../errors.js'
import { publishRequestSchema } from '../events/publish.js'
import { assertTopic } from '../events/topics.js'
import { readJson } from '../http/body.js'
import { enqueueRoute, parseBody } from '../http/enqueue-route.js'
import { defaultReporter, type ErrorReporter, notFound, onError } from '../http/errors.js'
import { type AppAuthOptions, defaultEnv, type Env, routeGuards } from '../http/guards.js'
import { leanHono } from '../http/router.js'
import { hostListSchema, jsonOnly, originListSchema, sameSite } from '../http/same-site.js'
import { given, ONCE } from '../validate.js'
import type { EdgeClient } from './client.js'

export interface EnqueueAppOptions {
  /** As createApp's: bearer SLUICE_SECRET or a signed request. `false` serves it unauthenticated. */
  auth?: AppAuthOptions | false
  /** Where SLUICE_SECRET comes from. Default `process.env` where the runtime has one. */
  env?: Env
  /** The route is `POST <basePath>/:name`. Default `/jobs`, as in the full app. */
  basePath?: string
  /** The publish route is `POST <eventsPath>/:topic`; `false` leaves it out. Default `/events`, as in the full app. */
  eventsPath?: string | false
  /** Largest request body, bytes. Default 256 KiB plus 4 KiB for the envelope. */
  maxBodyBytes?: number
  /** Receives every 5xx failure. Default console.error. */
  onError?: ErrorReporter
  /** As createApp's: the Host names it answers to. Default any. */
  allowedHosts?: string[]
  /** As createApp's: browser origins besides its own that may call it. Default none. */
  allowedOrigins?: string[]
}

const optionsSchema = z.strictObject({
  auth: z.optional(z.union([z.literal(false), z.record(z.string(), z.unknown())])),
  env: z.optional(z.record(z.string(), z.optional(z.string()))),
  basePath: z.optional(
    z
      .string()
      .check(z.regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be a path such as /jobs, without a trailing slash')),
  ),
  eventsPath: z.optional(
    z.union([
      z.literal(false),
      z
        .string()
        .check(
          z.regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be a path such as /events, without a trailing slash'),
        ),
    ]),
  ),
  maxBodyBytes: z.optional(z.int().check(z.minimum(1), z.maximum(64 * 1024 * 1024))),
  onError: z.optional(callable()),
  allowedHosts: given(() => hostListSchema),
  allowedOrigins: given(() => originListSchema),
})

/**
 * The enqueue and publish routes of the HTTP API on their own, over an edge client:
 * `POST <basePath>/:name` with `{ input, delay?, runAt?, priority? }` answers 202 `{ id }`;
 * `POST <eventsPath>/:topic` with `{ payload, eventId?, delay?, headers? }` answers 202
 * `{ eventId, jobs }`. Same authentication, body limits and error bodies as createApp. Its
 * `fetch` is a Workers or Vercel Edge handler.
 */
export function createEnqueueApp(client: EdgeClient, options: EnqueueAppOptions = {}): Hono {
  const checked = optionsSchema.safeParse(options, ONCE)
  if (!checked.success) {
    const first = checked.error.issues[0]
    throw new ConfigError(
      `Invalid createEnqueueApp options: ${first?.path.join('.') || '(root)'} ${first?.message}`,
      toIssues(checked.error.issues),
    )
  }
  const maxBodyBytes = options.maxBodyBytes ?? 256 * 1024 + 4096
  const guard = routeGuards(options.auth ?? {}, options.env ?? defaultEnv(), maxBodyBytes)
  // Hono as its default preset routes, without the default preset's routers: their size is
  // most of what hono adds to an edge bundle, and two routes need none of their speed.
  const app = leanHono()
  app.onError(onError(options.onError ?? defaultReporter))
  app.notFound(notFound)
  app.use('*', sameSite(options))
  // Signed as the full app's routes are, whatever paths they are served under here.
  app.post(
    `${options.basePath ?? '/jobs'}/:name`,
    jsonOnly,
    guard.write('/jobs/:name'),
    enqueueRoute(
      (name) => client.jobs.get(name),
      (job, input, opts) => client.enqueue(job, input as never, opts),
      maxBodyBytes,
    ),
  )
  const eventsPath = options.eventsPath ?? '/events'
  if (eventsPath !== false) {
    app.post(`${eventsPath}/:topic`, jsonOnly, guard.write('/events/:topic'), async (c) => {
      const topic = assertTopic(c.req.param('topic'))
      const { payload, eventId, delay, headers } = parseBody(
        publishRequestSchema,
        await readJson(c, maxBodyBytes),
      )
      const result = await client.publish(topic, payload, {
        ...(eventId === undefined ? {} : { eventId }),
        ...(delay === undefined ? {} : { delay }),
        ...(headers === undefined ? {} : { headers }),
      })
      return c.json(result, 202)
    })
  }
  return app
}
