/** The admin API's operations: reads through `sluice.inspect`, writes through the Sluice's controls. */
import type { Sluice } from '../../sluice.js'
import type { Operation } from './operation.js'
import { deadLetterOperations } from './routes/dead-letters.js'
import { jobOperations } from './routes/jobs.js'
import { policyOperations } from './routes/policies.js'
import { queueOperations } from './routes/queues.js'
import { recurringOperations } from './routes/recurring.js'
import { stateOperations } from './routes/state.js'

export function adminOperations(sluice: Sluice): Operation[] {
  return [
    ...queueOperations(sluice),
    ...jobOperations(sluice),
    ...deadLetterOperations(sluice),
    ...recurringOperations(sluice),
    ...policyOperations(sluice),
    ...stateOperations(sluice),
  ]
}
