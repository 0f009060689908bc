/**
 * The admin API (`/api/v1` under createApp): a Hono app built from adminOperations. Every
 * route takes the bearer token; in read-only mode every mutation answers 403 READ_ONLY before
 * its input is even read. Parameters, query and body are validated with their zod schemas:
 * bad input is a 400 in the standard error body, never a write.
 */
import { type Context, Hono, type MiddlewareHandler } from 'hono'
import * as z from 'zod'
import { SluiceError } from '../../errors.js'
import type { Sluice } from '../../sluice.js'
import type { AuthMiddleware } from '../auth.js'
import { readJson } from '../body.js'
import { jsonOnly } from '../same-site.js'
import { type Operation, parsePart } from './operation.js'
import { adminOperations } from './routes.js'

export interface AdminOptions {
  /** Refuse every mutation with 403 READ_ONLY. Default false. */
  readOnly?: boolean
}

const readOnlyGuard: MiddlewareHandler = async () => {
  throw new SluiceError('READ_ONLY', 'The admin API is read-only here: it answers reads only.')
}

const passThrough: MiddlewareHandler = async (_c, next) => {
  await next()
}

function handler(op: Operation, maxBodyBytes: number) {
  return async (c: Context): Promise<Response> => {
    const params = op.params ? parsePart(op.params, c.req.param(), 'path parameter') : {}
    const query = parsePart(op.query ?? emptyQuery, c.req.query(), 'query')
    const body = op.body ? parsePart(op.body, await readJson(c, maxBodyBytes), 'request body') : undefined
    const reply = await op.handle({ params, query, body }, c)
    return c.json(reply.body as object, reply.status as 200)
  }
}

const emptyQuery = z.object({}).strict()

/** The admin routes over `sluice`, relative to where they are mounted. */
export function adminApp(
  sluice: Sluice,
  auth: AuthMiddleware,
  options: AdminOptions & { maxBodyBytes: number; showSessionQueries: boolean },
): Hono {
  const app = new Hono()
  for (const op of adminOperations(sluice, { showSessionQueries: options.showSessionQueries })) {
    const writable = op.mutation && options.readOnly ? readOnlyGuard : passThrough
    app.on(op.method.toUpperCase(), op.path, jsonOnly, auth, writable, handler(op, options.maxBodyBytes))
  }
  return app
}
