/**
 * Which queues a drain may be asked for: those a job or subscriber of the app uses. The HTTP
 * drain route refuses the others, as the CLI's `sluice drain --queues` does.
 */
import { closest } from '../names.js'

export interface UnknownQueue {
  /** Its position in the list asked for. */
  index: number
  queue: string
  /** The known queue it is closest to, when it looks like a typo of one. */
  guess: string | undefined
}

/** The first of `queues` that is not in `known` (the app's queues, `config.queues`), or undefined. */
export function findUnknownQueue(
  queues: readonly string[],
  known: readonly string[],
): UnknownQueue | undefined {
  const index = queues.findIndex((queue) => !known.includes(queue))
  if (index < 0) return undefined
  const queue = queues[index]!
  return { index, queue, guess: closest(queue, known) }
}
