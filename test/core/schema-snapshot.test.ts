import { readFile } from 'node:fs/promises'
import { expect, test } from 'vitest'
import { snapshotOf, snapshotPath } from '../../scripts/schema-snapshot.js'
import { databaseUrl } from '../helpers/db.js'

test('migrations/schema.snapshot.sql is the schema the migrations and function files produce', async () => {
  const committed = await readFile(snapshotPath, 'utf8')
  expect(
    await snapshotOf(databaseUrl),
    'migrations/schema.snapshot.sql is stale: run `npm run schema:snapshot`',
  ).toBe(committed)
})
