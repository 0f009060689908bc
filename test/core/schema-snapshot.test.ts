import { expect, test } from 'vitest'
import { committedSnapshot, snapshotOf } from '../../scripts/schema-snapshot.js'
import { databaseUrl } from '../helpers/db.js'

test('migrations/snapshot/ is the schema the migrations and function files produce', async () => {
  const committed = await committedSnapshot()
  const produced = await snapshotOf(databaseUrl)
  const stale = 'migrations/snapshot/ is stale: run `npm run schema:snapshot`'
  expect([...committed.keys()].sort(), stale).toEqual([...produced.keys()].sort())
  for (const [file, text] of produced) expect(committed.get(file), `${stale} (${file})`).toBe(text)
})
