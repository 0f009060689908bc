// Every other /api/* route on the Node runtime: /api/jobs/:name, /api/events/:topic, /api/health,
// /api/metrics, and the operator's dashboard at /api/dashboard. /api/drain and /api/maintain are
// lean functions of their own (drain.ts, maintain.ts), which Vercel routes to first; this one
// still serves them at the same paths wherever it is mounted alone. `sluice build` reads
// maxDuration from this file into the function's config and hands it to the function as
// SLUICE_MAX_DURATION_MS, which the drain's budget follows.
import { sluice } from '../../examples/app.js'
import { vercelHandlers } from '../../src/platforms/vercel.js'

export const maxDuration = 60

export const { GET, POST } = vercelHandlers(sluice, { dashboard: true })
