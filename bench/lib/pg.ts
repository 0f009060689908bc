import pg from 'pg'

export function pool(url: string, max = 4): pg.Pool {
  const p = new pg.Pool({ connectionString: url, max })
  p.on('error', () => {})
  return p
}

export async function scalar(
  on: pg.Pool | pg.PoolClient,
  text: string,
  values: unknown[] = [],
): Promise<number> {
  const { rows } = await on.query(text, values)
  const first = rows[0] as Record<string, unknown> | undefined
  return Number(first ? Object.values(first)[0] : Number.NaN)
}

/**
 * Puts every system on the same footing before a timed run: VACUUM ANALYZE of the tables in
 * `schema` (visibility map and statistics as autovacuum would leave them) and a CHECKPOINT so
 * no run pays for the previous one's dirty buffers.
 */
export async function settleDown(admin: pg.Pool, schema: string): Promise<void> {
  const { rows } = await admin.query<{ name: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1`,
    [schema],
  )
  for (const { name } of rows) await admin.query(`VACUUM (ANALYZE) ${name}`)
  await admin.query('CHECKPOINT')
}

/** Runs `fn` inside a transaction that is always rolled back. */
export async function rolledBack<T>(admin: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await admin.connect()
  try {
    await client.query('BEGIN')
    return await fn(client)
  } finally {
    await client.query('ROLLBACK').catch(() => {})
    client.release()
  }
}

/** EXPLAIN (ANALYZE, BUFFERS) of a statement with its values bound, as text. */
export async function explain(
  client: pg.PoolClient,
  text: string,
  values: readonly unknown[],
): Promise<string> {
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS, VERBOSE, SETTINGS) ${text}`,
    values as unknown[],
  )
  return rows.map((r) => r['QUERY PLAN']).join('\n')
}

/** The headline figures of an EXPLAIN (ANALYZE, BUFFERS) text: planning and execution ms, top node buffers. */
export function planFigures(plan: string): { planningMs: number; executionMs: number; buffers: number } {
  const num = (re: RegExp): number => Number(re.exec(plan)?.[1] ?? Number.NaN)
  const first = /Buffers: ([^\n]*)/.exec(plan)?.[1] ?? ''
  const buffers = [...first.matchAll(/(?:hit|read)=(\d+)/g)].reduce((a, m) => a + Number(m[1]), 0)
  return {
    planningMs: num(/Planning Time: ([\d.]+) ms/),
    executionMs: num(/Execution Time: ([\d.]+) ms/),
    buffers,
  }
}

/**
 * The plans of the statements a function call runs inside (claim and settle are plpgsql
 * functions, so a plain EXPLAIN shows one Function Scan): auto_explain, loaded for this
 * diagnostic session only, sends each nested statement's EXPLAIN (ANALYZE, BUFFERS) back
 * as a notice. Needs a superuser, as the benchmark's own database has.
 */
export async function explainNested(
  client: pg.PoolClient,
  text: string,
  values: readonly unknown[],
): Promise<string> {
  const plans: string[] = []
  const onNotice = (notice: { message?: string }): void => {
    if (notice.message?.includes('Query Text:')) plans.push(notice.message)
  }
  client.on('notice', onNotice)
  try {
    await client.query("LOAD 'auto_explain'")
    for (const setting of [
      'auto_explain.log_min_duration = 0',
      'auto_explain.log_analyze = on',
      'auto_explain.log_buffers = on',
      'auto_explain.log_nested_statements = on',
      'auto_explain.log_level = notice',
    ]) {
      await client.query(`SET LOCAL ${setting}`)
    }
    await client.query(text, values as unknown[])
  } finally {
    client.off('notice', onNotice)
  }
  return plans.join('\n\n')
}
