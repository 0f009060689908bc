/**
 * Which queues a drain may be asked for: those a job or subscriber of the app uses. The HTTP
 * drain route refuses the others, as the CLI's `sluice drain --queues` does.
 */

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = row[j]!
      row[j] = next
    }
  }
  return row[b.length]!
}

/** The closest of `known` to `typed`, when it is close enough to be a typo. */
export function closest(typed: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(typed.length / 3)) + 1
  for (const name of known) {
    const d = distance(typed.toLowerCase(), name.toLowerCase())
    if (d < bestDistance) {
      best = name
      bestDistance = d
    }
  }
  return best
}

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
