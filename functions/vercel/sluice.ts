// Every /api/* route on the Node runtime: /api/drain, /api/maintain (Vercel cron), /api/jobs/:name,
// /api/health, /api/metrics, and the operator's dashboard at /api/dashboard. `sluice build` reads
// maxDuration from this file into the function's config and hands it to the function as
// SLUICE_MAX_DURATION_MS, which the drain's budget follows.
import { sluice } from '../../examples/app.js'
import { vercelHandlers } from '../../src/platforms/vercel.js'

export const maxDuration = 60

export const { GET, POST } = vercelHandlers(sluice, { dashboard: true })
