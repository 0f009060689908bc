// Enqueue and publish as a Cloudflare Worker (module syntax): POST /jobs/:name with { input, delay?,
// runAt?, priority? } and POST /events/:topic with { payload, eventId?, delay?, headers? }, bearer
// SLUICE_SECRET or a signed request. The environment arrives with each request; the wake-up sent to
// SLUICE_DRAIN_URL after an enqueue goes to ctx.waitUntil, so that it outlives the answer.
// Deploy with functions/cloudflare/wrangler.toml. Job contracts only: no handler code, no Node built-ins.
import { contracts } from '../../examples/contracts.js'
import { createEdgeClient, createEnqueueApp, seeWakeupsOut } from '../../src/edge.js'

interface Env {
  DATABASE_URL: string
  SLUICE_SECRET?: string
  SLUICE_SCHEMA?: string
  SLUICE_DRAIN_URL?: string
  [name: string]: unknown
}

interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void
}

let app: ReturnType<typeof createEnqueueApp> | undefined

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const vars = Object.fromEntries(
      Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    )
    app ??= createEnqueueApp(createEdgeClient({ database: env.DATABASE_URL, jobs: contracts, env: vars }), {
      env: vars,
    })
    const response = await app.fetch(request)
    await seeWakeupsOut((promise) => ctx.waitUntil(promise))
    return response
  },
}
