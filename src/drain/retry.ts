import { isTransient } from '../db/errors.js'

/** First pause after a transient failure; it doubles on each try, up to RETRY_MAX_DELAY_MS. */
export const RETRY_FIRST_DELAY_MS = 50
export const RETRY_MAX_DELAY_MS = 1_000

/**
 * Sends `send()` until it succeeds, sending again after a transient failure (see isTransient)
 * with a doubling pause, as long as the next try starts before `until`; then throws the last
 * error. Only for statements that are safe to send twice.
 */
export async function retrying<T>(
  send: () => Promise<T>,
  until: number,
  onRetry: (error: unknown, delayMs: number) => void,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send()
    } catch (error) {
      const delayMs = Math.min(RETRY_MAX_DELAY_MS, RETRY_FIRST_DELAY_MS * 2 ** attempt)
      if (!isTransient(error) || Date.now() + delayMs >= until) throw error
      onRetry(error, delayMs)
      await new Promise((resolve) => setTimeout(resolve, delayMs))
    }
  }
}
