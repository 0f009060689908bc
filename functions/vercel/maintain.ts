// Maintenance as a function of its own at /api/maintain, which Vercel cron (vercel.json) calls
// every minute with Authorization: Bearer $CRON_SECRET. It bundles maintenance only.
import { sluice } from '../../examples/app.js'
import { vercelMaintain } from '../../src/platforms/vercel.js'

export const maxDuration = 60

export const { GET, POST } = vercelMaintain(sluice)
