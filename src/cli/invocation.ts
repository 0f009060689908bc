import { quoteSchema } from '../names.js'
import type { Sluice } from '../sluice.js'
import { endInvocation as endInvocationSql } from '../sql/invocations.js'

/** Ends a drain's invocation that could not end itself (it failed, or the process quits). */
export async function endInvocation(sluice: Sluice, invocationId: string): Promise<void> {
  const db = await sluice.db()
  await db.query(endInvocationSql(quoteSchema(sluice.config.schema), invocationId))
}
