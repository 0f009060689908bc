import { UnsupportedError } from '../errors.js'
import { toDatabaseError } from './errors.js'
import type { Db, QueryResult } from './types.js'

/**
 * What Sluice needs of the function `neon(url)` returns (structural: the published declarations
 * never import the optional driver's types).
 */
export interface NeonSql<Queued = unknown> {
  query(text: string, values?: unknown[], options?: { fullResults?: boolean }): PromiseLike<unknown>
  /** Takes the promises `query` returned (Neon's own type for them is narrower than `query`'s). */
  transaction(queries: Queued[], options?: { fullResults?: boolean }): PromiseLike<unknown>
}

interface FullResult {
  rows: Record<string, unknown>[]
  rowCount: number | null
}

function toResult<R>(result: FullResult): QueryResult<R> {
  return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length }
}

/**
 * A Db over Neon's HTTP driver (`neon(url)`): one HTTP round trip per statement,
 * batches as one non-interactive transaction, no interactive transactions.
 * Runs anywhere `fetch` does, edge runtimes included.
 */
export function fromNeonHttp<Queued>(sql: NeonSql<Queued>): Db {
  return {
    kind: 'neon-http',
    interactiveTransactions: false,
    async query<R>(statement: { text: string; values: readonly unknown[] }) {
      try {
        const result = (await sql.query(statement.text, statement.values as unknown[], {
          fullResults: true,
        })) as unknown as FullResult
        return toResult<R>(result)
      } catch (error) {
        throw toDatabaseError(error)
      }
    },
    async batch(statements) {
      try {
        const results = (await sql.transaction(
          statements.map((statement) => sql.query(statement.text, statement.values as unknown[]) as Queued),
          { fullResults: true },
        )) as unknown as FullResult[]
        return results.map((result) => toResult<Record<string, unknown>>(result))
      } catch (error) {
        throw toDatabaseError(error)
      }
    },
    async transaction() {
      throw new UnsupportedError(
        "Neon's HTTP driver has no interactive transactions; use the WebSocket Pool (fromNeonPool) or pg.",
      )
    },
    async close() {},
  }
}
