// The drain as a function of its own at /api/drain: POST drains within maxDuration, with the
// same authentication, body and answer as the API's /drain. It bundles the drain and nothing of
// the admin API or the dashboard, so it starts faster than the API's function. `sluice build`
// reads maxDuration into the function's config and SLUICE_MAX_DURATION_MS.
import { sluice } from '../../examples/app.js'
import { vercelDrain } from '../../src/platforms/vercel.js'

export const maxDuration = 60

export const { POST } = vercelDrain(sluice)
