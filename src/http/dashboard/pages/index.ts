import { batchesPage } from './batches.js'
import { databasePage } from './database.js'
import { deadLettersPage } from './dead-letters.js'
import { eventsPage } from './events.js'
import { insightsPage } from './insights.js'
import { invocationsPage } from './invocations.js'
import { jobPage } from './job.js'
import { jobsPage } from './jobs.js'
import { locksPage } from './locks.js'
import { overviewPage } from './overview.js'
import { policiesPage } from './policies.js'
import { policyPage } from './policy.js'
import { queuesPage } from './queues.js'
import { recurringPage } from './recurring.js'
import type { Page } from './types.js'

/** Every page; the overview first (it also answers the dashboard's path with a trailing slash). */
export const PAGES: readonly Page[] = [
  overviewPage,
  queuesPage,
  jobsPage,
  jobPage,
  deadLettersPage,
  invocationsPage,
  recurringPage,
  batchesPage,
  eventsPage,
  locksPage,
  policiesPage,
  policyPage,
  insightsPage,
  databasePage,
]
