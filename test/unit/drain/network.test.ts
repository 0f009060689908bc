import { expect, test } from 'vitest'
import { merged } from '../../../src/drain/claimed.js'
import { NEAR_MS, NETWORK_SAMPLES, NetworkShare } from '../../../src/drain/network.js'
import type { ClaimedRow } from '../../../src/sql/index.js'

test('the network share is zero until enough round trips are timed, then the smallest of them', () => {
  const share = new NetworkShare()
  for (let i = 0; i < NETWORK_SAMPLES - 1; i++) share.add(40 + i)
  expect(share.ms).toBe(0)
  share.add(30)
  expect(share.ms).toBe(30)
  // A slow round trip (a loaded machine) never raises it.
  share.add(90)
  expect(share.ms).toBe(30)
})

test('one quick round trip marks a near database for good', () => {
  const share = new NetworkShare()
  for (let i = 0; i < NETWORK_SAMPLES * 4; i++) share.add(i === 3 ? NEAR_MS / 2 : 50)
  expect(share.ms).toBe(0)
  expect(new NetworkShare().ms).toBe(0)
})

const row = (id: number): ClaimedRow => ({ id: String(id) }) as unknown as ClaimedRow

test('claims received together are taken as one: limits add, defers join, flags or', () => {
  const first = { limit: 5, defer: ['slow'], got: { rows: [row(1)], cut: false, more: false } }
  const second = merged(
    first,
    { limit: 5, defer: ['slower'] },
    { rows: [row(2)], cut: true, more: false },
    true,
  )
  expect(second.limit).toBe(10)
  expect(second.defer.sort()).toEqual(['slow', 'slower'])
  expect(second.got.rows.map((r) => r.id)).toEqual(['1', '2'])
  expect(second.got).toMatchObject({ cut: true, more: false })
  const alone = merged(second, { limit: 3, defer: [] }, { rows: [row(3)], cut: false, more: true }, false)
  expect(alone).toEqual({ limit: 3, defer: [], got: { rows: [row(3)], cut: false, more: true } })
})

test('a round trip the event loop was busy for much of is not timed: a loaded machine does not make a far database near', () => {
  const share = new NetworkShare()
  // 40 ms away; every other round trip ran beside handlers (or a descheduled process) for most of it.
  for (let i = 0; i < NETWORK_SAMPLES * 2; i++) {
    if (i % 2 === 0) share.time(44, 2, 30)
    else share.time(45, 3, 1)
  }
  expect(share.ms).toBe(41)
  // Busy for a quarter of it: still timed, the busy time taken off.
  share.time(40, 2, 10)
  expect(share.ms).toBe(28)
  // Untimed round trips do not count toward the samples needed.
  const busy = new NetworkShare()
  for (let i = 0; i < NETWORK_SAMPLES * 2; i++) busy.time(50, 2, 40)
  expect(busy.ms).toBe(0)
  // A near database's round trips are short: a few ms busy is no reason to skip them.
  const near = new NetworkShare()
  for (let i = 0; i < NETWORK_SAMPLES; i++) near.time(i === 0 ? 3 : 40, 0.5, i === 0 ? 2 : 0)
  expect(near.ms).toBe(0)
})
