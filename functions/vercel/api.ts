// Every /api/* route on the Node runtime: /api/drain, /api/maintain (Vercel cron), /api/jobs/:name,
// /api/health, /api/metrics, and the operator's dashboard at /api/dashboard. maxDuration is set
// per function in scripts/build.ts (FUNCTIONS).
import { sluice } from '../../examples/app.js'
import { vercelHandlers } from '../../src/platforms/vercel.js'

export const { GET, POST } = vercelHandlers(sluice, { dashboard: true })
