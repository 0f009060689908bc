import type { Db } from '../db/types.js'
import { markProcessed } from '../sql/subscriptions.js'
import type { SubscriberRuntime } from './subscriber.js'

/**
 * What a drain gives subscribers: ctx.transaction, where the driver has interactive
 * transactions. The transaction inserts the processed mark first (a concurrent run of the same
 * event waits on it, then finds it), runs the handler's function, and commits both together;
 * a run whose signal fired meanwhile rolls back instead.
 */
export function subscriberRuntime(db: Db, t: string): SubscriberRuntime {
  if (!db.interactiveTransactions) return { transaction: undefined }
  return {
    async transaction(mark, fn, signal) {
      let skipped = false
      // Some drivers wrap what the callback throws; the handler's own error is rethrown as is.
      let failed: { error: unknown } | undefined
      try {
        const value = await db.transaction(async (tx) => {
          const { rows } = await tx.query(markProcessed(t, mark.eventId, mark.subscriber))
          if (rows.length === 0) {
            skipped = true
            throw new Error('already processed: roll back')
          }
          try {
            const result = await fn(tx)
            signal.throwIfAborted()
            return result
          } catch (error) {
            failed = { error }
            throw error
          }
        })
        return { skipped: false, value }
      } catch (error) {
        if (skipped) return { skipped: true }
        throw failed ? failed.error : error
      }
    },
  }
}
