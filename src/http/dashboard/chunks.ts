/**
 * An action over more rows than one statement takes (purge, bulk retry and cancel, dead letters
 * by filter) runs as bounded chunks inside one request: each chunk is one call of at most `size`
 * rows, and the loop goes on while chunks come back full and the time budget lasts. The flash
 * then states the true total and whether anything was left for another click.
 */
import { plural } from './html.js'

export interface Chunked {
  /** Rows the chunks took, all together. */
  total: number
  /** The budget ran out after a full chunk: more may match. */
  more: boolean
}

/**
 * Calls `chunk` (one bounded operation; how many rows it took) until one takes fewer than `size`,
 * or the budget is spent after a full one. At least one chunk always runs.
 */
export async function inChunks(
  size: number,
  budgetMs: number,
  chunk: (size: number) => Promise<number>,
): Promise<Chunked> {
  const deadline = Date.now() + budgetMs
  let total = 0
  for (;;) {
    const n = await chunk(size)
    total += n
    if (n < size) return { total, more: false }
    if (Date.now() >= deadline) return { total, more: true }
  }
}

/** The largest of some ids (bigint strings), where the next chunk starts after. */
export const lastId = (ids: readonly string[]): string | undefined =>
  ids.reduce<string | undefined>(
    (top, id) => (top === undefined || BigInt(id) > BigInt(top) ? id : top),
    undefined,
  )

/** The smallest of some ids (bigint strings), where a walk downwards goes on below. */
export const firstId = (ids: readonly string[]): string | undefined =>
  ids.reduce<string | undefined>(
    (low, id) => (low === undefined || BigInt(id) < BigInt(low) ? id : low),
    undefined,
  )

/** "12,000 jobs cancelled." and, when the budget stopped it, what is left to do. */
export function chunkedMessage(done: Chunked, what: string, verb: string, again: string): string {
  const said = `${plural(done.total, what)} ${verb}.`
  return done.more ? `${said} More remain: the time for one request ran out; ${again} to go on.` : said
}
