// Enqueue and publish on Vercel's Edge runtime: POST /api/enqueue/:name with { input, delay?, runAt?,
// priority? }, and POST /api/enqueue/events/:topic with { payload, eventId?, delay?, headers? }.
// It imports the job contracts only, so no handler code (and no Node built-in) is bundled.
import { contracts } from '../../examples/contracts.js'
import { createEdgeClient, createEnqueueApp, seeWakeupsOut, vercelWaitUntil } from '../../src/edge.js'

export const config = { runtime: 'edge' }

let app: ReturnType<typeof createEnqueueApp> | undefined

export default async function enqueue(request: Request): Promise<Response> {
  // Built on the first request, when every edge runtime has its environment in place.
  app ??= createEnqueueApp(
    createEdgeClient({
      database: typeof process === 'undefined' ? '' : (process.env.DATABASE_URL ?? ''),
      jobs: contracts,
    }),
    // Both under /api/enqueue/, the paths the build routes to this function.
    { basePath: '/api/enqueue', eventsPath: '/api/enqueue/events' },
  )
  const response = await app.fetch(request)
  // The wake-up sent to SLUICE_DRAIN_URL goes to the request's waitUntil: it outlives the answer.
  await seeWakeupsOut(vercelWaitUntil())
  return response
}
