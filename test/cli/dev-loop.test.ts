import { afterAll, beforeAll, expect, test } from 'vitest'
import { z } from 'zod'
import { startDrainLoop } from '../../src/cli/dev/loop.js'
import { defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let t: TestSluice
const errors: unknown[] = []

// Its handler renames the archive table, so the settle of its own batch fails: a drain that
// fails after its claim registered the invocation.
const breakSettle = defineJob({
  name: 'break-settle',
  input: z.object({}),
  run: async () => {
    await t.sql('ALTER TABLE $schema.archive_groups RENAME TO archive_away')
  },
})

beforeAll(async () => {
  t = await makeSluice({ jobs: [breakSettle] })
})
afterAll(() => t.cleanup())

test('the dev loop ends the invocation of a drain that failed, then stops cleanly', async () => {
  await t.sluice.enqueue(breakSettle, {})
  const loop = startDrainLoop(t.sluice, {
    pollMs: 60_000,
    maxJobs: 10,
    onJob: () => {},
    onError: (error) => void errors.push(error),
  })
  await expect.poll(() => errors.length, { timeout: 20_000 }).toBeGreaterThan(0)
  await t.sql('ALTER TABLE $schema.archive_away RENAME TO archive_groups')
  await loop.stop()
  expect(await t.sql('SELECT id FROM $schema.invocations')).toEqual([])
})
