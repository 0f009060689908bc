import type { Statement } from '../db/types.js'

/** The cheapest round trip that proves the database answers. */
export function ping(): Statement {
  return { text: 'SELECT 1 AS ok', values: [] }
}
