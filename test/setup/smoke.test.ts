import pg from 'pg'
import { expect, inject, test } from 'vitest'

test('the provided database answers', async () => {
  const client = new pg.Client({ connectionString: inject('databaseUrl') })
  await client.connect()
  const { rows } = await client.query<{ v: number }>('select 1 + 1 as v')
  await client.end()
  expect(rows[0]?.v).toBe(2)
})
