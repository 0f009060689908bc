/**
 * The example app, as the `sluice` CLI loads it (`npm start` runs `sluice dev` on it).
 *
 * The default export is a function: the CLI calls it with the database it chose
 * (DATABASE_URL when set, otherwise the embedded PGlite in ./.sluice/pglite), and
 * deployed code calls it with no argument to use DATABASE_URL.
 */
import { createSluice, type Db, defineRecurring, type Sluice } from '../src/index.js'
import { exampleJobs, exampleSubscribers } from './jobs.js'

// `sluice migrate` and `sluice dev` run this after Sluice's own migrations.
export { setup } from './schema.js'

/** Inputs (and, keyed `event:<topic>`, event payloads) `sluice dev` uses for the commands it suggests. */
export const samples = {
  'welcome-email': { userId: 'u_1', email: 'ada@example.com', name: 'Ada' },
  'resize-image': { imageId: 'cat_42', width: 640 },
  'generate-report': { day: new Date().toISOString().slice(0, 10) },
  'event:orders.created': { orderId: 'o_1001', customer: 'ada@example.com', total: 42 },
}

export default function exampleApp(options: { database?: string | Db } = {}): Sluice {
  const jobs = exampleJobs(() => sluice.db())
  const nightlyReport = defineRecurring({
    name: 'nightly-report',
    cron: '0 3 * * *',
    timezone: 'UTC',
    job: jobs.generateReport,
    input: {},
  })
  const sluice: Sluice = createSluice({
    ...(options.database ? { database: options.database } : {}),
    jobs: Object.values(jobs),
    subscribers: Object.values(exampleSubscribers()),
    recurring: [nightlyReport],
  })
  return sluice
}
