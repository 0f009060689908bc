/** The flash after a dead-letter retry: how many went back, and which were kept and why. */
import type { KeptDeadLetter } from '../../sql/dead-letters.js'
import { plural } from './html.js'

/** Kept dead letters named in the flash (it is capped at 500 characters); the rest are counted. */
const NAMED = 3
const REASON_CHARS = 100

export function retryMessage(requeued: number, kept: readonly KeptDeadLetter[]): string {
  const back = `${plural(requeued, 'dead letter')} put back in ${requeued === 1 ? 'its' : 'their'} queue.`
  if (kept.length === 0) return back
  const named = kept
    .slice(0, NAMED)
    .map(
      (k) =>
        `${k.id} (${k.reason.length > REASON_CHARS ? `${k.reason.slice(0, REASON_CHARS - 1)}…` : k.reason})`,
    )
  const more = kept.length > NAMED ? `; and ${kept.length - NAMED} more` : ''
  return `${back} ${kept.length.toLocaleString('en-US')} kept as dead letter${kept.length === 1 ? '' : 's'}: ${named.join('; ')}${more}.`
}
