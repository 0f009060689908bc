import type pg from 'pg'
import { afterEach, expect, test } from 'vitest'
import { DatabaseError, fromPg } from '../../src/index.js'
import { pgPool } from '../helpers/db.js'

const pools: pg.Pool[] = []
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end()))
})

test('a connection dropped while a transaction waits on the application fails the transaction, not the process', async () => {
  const pool = pgPool(1)
  const admin = pgPool(1)
  pools.push(pool, admin)
  let client: pg.PoolClient | undefined
  pool.on('acquire', (c) => {
    client = c
  })
  const db = fromPg(pool)
  const attempt = db.transaction(async (tx) => {
    const { rows } = await tx.query<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid', values: [] })
    const closed = new Promise((resolve) => client!.once('end', resolve))
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])
    // The application's own work, no query in flight: the server's FATAL arrives as an 'error'
    // event on an idle checked-out client, which the pool does not listen to.
    await closed
  })
  await expect(attempt).rejects.toBeInstanceOf(DatabaseError)
  // The broken client was discarded; the pool serves the next statement on a new connection.
  expect((await db.query<{ one: number }>({ text: 'SELECT 1 AS one', values: [] })).rows).toEqual([
    { one: 1 },
  ])
})
