import { expect, test } from 'vitest'
import { emptyBatch } from '../../../src/drain/batch.js'
import { tally } from '../../../src/drain/claimed.js'
import type { DrainSummary } from '../../../src/drain/options.js'
import type { SettleRow } from '../../../src/sql/index.js'

const summary = (): DrainSummary =>
  ({
    completed: 0,
    failed: 0,
    retried: 0,
    deadLettered: 0,
    expired: 0,
    handedBack: 0,
    lostLeases: 0,
  }) as DrainSummary
const row = (resumed: string[] | null): SettleRow => ({
  completed: 0,
  retried: 0,
  dead: 0,
  handed_back: 0,
  ready: null,
  resumed,
})

test("a settle's resumed parents are left to other drains when this one does not serve their queue, or ends", () => {
  const into = new Set<string>()
  const queues = ['children', 'parents']
  // Sent with a claim: a parent in one of the drain's queues is this drain's to take.
  tally(summary(), emptyBatch(), row(['parents', 'elsewhere']), { queues, into, final: false })
  expect([...into]).toEqual(['elsewhere'])
  tally(summary(), emptyBatch(), row(null), { queues, into, final: false })
  expect([...into]).toEqual(['elsewhere'])
  // The drain's last settle: nothing of it will be taken by this drain.
  tally(summary(), emptyBatch(), row(['parents']), { queues, into, final: true })
  expect([...into].sort()).toEqual(['elsewhere', 'parents'])
})
