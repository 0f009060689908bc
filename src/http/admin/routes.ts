/** The admin API's operations: reads through `sluice.inspect`, writes through the Sluice's controls. */
import type { Sluice } from '../../sluice.js'
import type { Operation } from './operation.js'
import { deadLetterOperations } from './routes/dead-letters.js'
import { jobOperations } from './routes/jobs.js'
import { policyOperations } from './routes/policies.js'
import { queueOperations } from './routes/queues.js'
import { recurringOperations } from './routes/recurring.js'
import { stateOperations } from './routes/state.js'

/** What the admin API shows beyond Sluice's own state. */
export interface AdminReadOptions {
  /** Other database sessions' SQL text on /database. Default false. */
  showSessionQueries?: boolean
}

export function adminOperations(sluice: Sluice, options: AdminReadOptions = {}): Operation[] {
  return [
    ...queueOperations(sluice),
    ...jobOperations(sluice),
    ...deadLetterOperations(sluice),
    ...recurringOperations(sluice),
    ...policyOperations(sluice),
    ...stateOperations(sluice, options.showSessionQueries ?? false),
  ]
}
