import { afterAll, beforeAll, expect, test } from 'vitest'
import * as z from 'zod'
import { functionSources, readFragments } from '../../scripts/gen-migrations.js'
import { defineJob, fromPg } from '../../src/index.js'
import { functions } from '../../src/migrate/functions.generated.js'
import { migrations } from '../../src/migrate/migrations.generated.js'
import { migrate } from '../../src/migrate/run.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

// The claim's per-row condition is written once (migrations/fragments/claim_candidate.sql) and
// placed in every walk that picks jobs. A condition added there reaches jobs with and without an
// admission policy alike: here, one that holds back jobs whose name starts with "held-".

const job = (name: string, queue: string, admitted: boolean) =>
  defineJob({
    name,
    queue,
    input: z.object({ account: z.string() }),
    ...(admitted
      ? { admission: { partition: (i: { account: string }) => i.account, concurrency: { max: 5 } } }
      : {}),
    run: () => {},
  })
const jobs = [
  job('held-plain', 'plain', false),
  job('go-plain', 'plain', false),
  job('held-admitted', 'admitted', true),
  job('go-admitted', 'admitted', true),
]

let t: TestSluice
beforeAll(async () => {
  t = await makeSluice({ jobs })
})
afterAll(async () => {
  await t?.cleanup()
})

const waiting = async () =>
  (await t.sql<{ name: string }>('SELECT name FROM $schema.jobs ORDER BY name')).map((r) => r.name)

test('a condition added to the fragment holds back plain and admitted jobs alike', async () => {
  const fragments = await readFragments()
  const condition = fragments.get('claim_candidate')
  expect(condition).toBeDefined()
  const sources = await functionSources(
    new Map([...fragments, ['claim_candidate', `${condition}\nAND :ROW.name NOT LIKE 'held-%'`]]),
  )
  // The generated files are these sources with the fragment as it is.
  expect((await functionSources()).map((f) => f.hash)).toEqual(functions.map((f) => f.hash))
  // Every walk carries the added condition: a plain queue's, in claim_open (the plain path) and
  // claim_pick (a gated claim), and an admitting partition's, in admission_walk.
  const walks = (file: string) =>
    sources
      .find((f) => f.name === file)!
      .statements.join('\n')
      .split("j.name NOT LIKE 'held-%'").length - 1
  expect(walks('claim_stages')).toBe(2)
  expect(walks('admission_claim')).toBe(1)

  const db = fromPg(t.admin)
  const changed = await migrate(db, t.schema, migrations, sources)
  expect(changed.functions).toEqual(['admission_claim', 'claim_stages'])
  for (const one of jobs) await t.sluice.enqueue(one, { account: 'acme' })
  // A plain queue alone takes the plain path; beside an admitting queue, the gated one.
  expect(await t.sluice.drain({ queues: ['plain'] })).toMatchObject({ completed: 1 })
  expect(await t.sluice.drain({ queues: ['plain', 'admitted'] })).toMatchObject({ completed: 1 })
  expect(await waiting()).toEqual(['held-admitted', 'held-plain'])

  // The fragment as it is: the held jobs are picked again, by both walks.
  expect((await migrate(db, t.schema, migrations, functions)).functions).toEqual([
    'admission_claim',
    'claim_stages',
  ])
  expect(await t.sluice.drain({ queues: ['plain'] })).toMatchObject({ completed: 1 })
  expect(await t.sluice.drain({ queues: ['plain', 'admitted'] })).toMatchObject({ completed: 1 })
  expect(await waiting()).toEqual([])
})
