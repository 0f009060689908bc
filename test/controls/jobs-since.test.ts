/** inspect.jobs({ since, until }): the jobs list by enqueue time, through the API and the admin route. */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, bearer } from '../helpers/http.js'
import { type RowFactory, rowFactory } from '../helpers/rows.js'

let t: TestSluice
let rows: RowFactory
let ids: { old: string; recent: string; blocked: string; now: string }
let dbNow: Date
beforeAll(async () => {
  t = await makeSluice({ jobs: [] })
  rows = rowFactory(t.admin, `"${t.schema}"`)
  const old = await rows.job({ queue: 'q', enqueuedInMs: -3_600_000 })
  const recent = await rows.job({ queue: 'q', enqueuedInMs: -60_000 })
  await rows.semaphore({ key: 'k', value: 1, limit: 1 })
  const blocked = await rows.blocked({ concurrencyKey: 'k', queue: 'q' })
  const fresh = await rows.job({ queue: 'q' })
  ids = { old: old.id, recent: recent.id, blocked, now: fresh.id }
  dbNow = (await t.sql<{ now: Date }>('SELECT now() AS now'))[0]!.now
})
afterAll(() => t.cleanup())

const listed = async (q: { since?: Date; until?: Date }) =>
  (await t.sluice.inspect.jobs({ queue: 'q', ...q })).map((j) => j.id)

test('since and until bound the enqueue time, blocked jobs included', async () => {
  const tenMinutesAgo = new Date(dbNow.getTime() - 600_000)
  expect(await listed({})).toEqual([ids.old, ids.recent, ids.blocked, ids.now])
  expect(await listed({ since: tenMinutesAgo })).toEqual([ids.recent, ids.blocked, ids.now])
  expect(await listed({ until: tenMinutesAgo })).toEqual([ids.old])
  expect(
    await listed({ since: new Date(dbNow.getTime() - 7_200_000), until: new Date(dbNow.getTime() - 30_000) }),
  ).toEqual([ids.old, ids.recent])
  await expect(t.sluice.inspect.jobs({ since: new Date('nope') })).rejects.toThrow(
    /since must be a valid Date/,
  )
})

test('the admin route takes ISO 8601 since and until, and refuses anything else with 400', async () => {
  const app = appFor(t)
  const since = new Date(dbNow.getTime() - 600_000).toISOString()
  const res = await app.request(`/api/v1/jobs?queue=q&since=${encodeURIComponent(since)}`, {
    headers: bearer(),
  })
  expect(res.status).toBe(200)
  const body = (await res.json()) as { jobs: { id: string }[] }
  expect(body.jobs.map((j) => j.id)).toEqual([ids.recent, ids.blocked, ids.now])
  const bad = await app.request('/api/v1/jobs?until=yesterday', { headers: bearer() })
  expect(bad.status).toBe(400)
})
