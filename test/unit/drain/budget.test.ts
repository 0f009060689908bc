import { describe, expect, it } from 'vitest'
import { availableMs, DURATIONS_REFRESH_MS, DurationBook, deadlineFrom } from '../../../src/drain/budget.js'

describe('deadlineFrom', () => {
  it('keeps the safety margin off the requested budget', () => {
    expect(deadlineFrom({ now: 1_000, budgetMs: 10_000, safetyMarginMs: 1_000 })).toBe(10_000)
  })

  it("takes the platform's remaining time when it is shorter than the budget", () => {
    expect(
      deadlineFrom({ now: 0, budgetMs: 60_000, platformRemainingMs: 20_000, safetyMarginMs: 2_000 }),
    ).toBe(18_000)
    expect(
      deadlineFrom({ now: 0, budgetMs: 20_000, platformRemainingMs: 60_000, safetyMarginMs: 2_000 }),
    ).toBe(18_000)
  })

  it('keeps at most a quarter of the time available as margin, so a short budget still runs jobs', () => {
    expect(deadlineFrom({ now: 0, budgetMs: 1_000, safetyMarginMs: 1_000 })).toBe(750)
    expect(deadlineFrom({ now: 0, budgetMs: 4_000, safetyMarginMs: 1_000 })).toBe(3_000)
    expect(deadlineFrom({ now: 0, budgetMs: 4_004, safetyMarginMs: 1_000 })).toBe(3_004)
  })

  it('never ends before now', () => {
    expect(deadlineFrom({ now: 500, budgetMs: 0, safetyMarginMs: 1_000 })).toBe(500)
    expect(deadlineFrom({ now: 500, budgetMs: 5_000, platformRemainingMs: -100, safetyMarginMs: 10 })).toBe(
      500,
    )
  })

  it('with no margin, ends when the time available does', () => {
    expect(deadlineFrom({ now: 100, budgetMs: 900, safetyMarginMs: 0 })).toBe(1_000)
  })

  it('availableMs is the smaller of budget and platform time', () => {
    expect(availableMs({ budgetMs: 5 })).toBe(5)
    expect(availableMs({ budgetMs: 5, platformRemainingMs: 3 })).toBe(3)
    expect(availableMs({ budgetMs: 5, platformRemainingMs: undefined })).toBe(5)
  })
})

describe('DurationBook', () => {
  const jobs = new Map([
    ['quick', { timeout: 30_000 }],
    ['slow', { timeout: 2_000 }],
  ])

  it("expects a job's timeout until it has seen it run", () => {
    const book = new DurationBook()
    expect(book.expected('quick', 30_000)).toBe(30_000)
  })

  it('expects the peak with headroom (× 1.5 + 10 ms), never above the timeout', () => {
    const book = new DurationBook()
    book.record('quick', 100)
    expect(book.expected('quick', 30_000)).toBe(160)
    book.record('slow', 5_000)
    expect(book.expected('slow', 2_000)).toBe(2_000)
  })

  it('raises the peak at once and lets it decay slowly (× 0.9 + new × 0.1)', () => {
    const book = new DurationBook()
    book.record('quick', 100)
    book.record('quick', 1_000)
    expect(book.expected('quick', 30_000)).toBe(1_510)
    book.record('quick', 0)
    // 1000 × 0.9 + 0 = 900 → 900 × 1.5 + 10
    expect(book.expected('quick', 30_000)).toBe(1_360)
  })

  it("learns the database's figures only for names it has not seen run", () => {
    const book = new DurationBook()
    book.record('quick', 100)
    book.learn('s:quick,other', { quick: 10_000, other: 200, bad: Number.NaN }, 0)
    expect(book.expected('quick', 30_000)).toBe(160)
    expect(book.expected('other', 30_000)).toBe(310)
    expect(book.expected('bad', 30_000)).toBe(30_000)
  })

  it('clamps a negative recorded figure to zero', () => {
    const book = new DurationBook()
    book.learn('s', { odd: -50 }, 0)
    expect(book.expected('odd', 30_000)).toBe(10)
  })

  it('is stale for a source never read, and again after the refresh period', () => {
    const book = new DurationBook()
    expect(book.stale('s', 0)).toBe(true)
    book.learn('s', {}, 1_000)
    expect(book.stale('s', 1_000 + DURATIONS_REFRESH_MS - 1)).toBe(false)
    expect(book.stale('s', 1_000 + DURATIONS_REFRESH_MS)).toBe(true)
    expect(book.stale('other', 1_000)).toBe(true)
  })

  it('times a batch as waves of its slowest expected job', () => {
    const book = new DurationBook()
    book.record('quick', 100)
    const rows = [{ name: 'quick' }, { name: 'quick' }, { name: 'quick' }]
    expect(book.batchMs(rows, jobs, 2)).toBe(2 * 160)
    expect(book.batchMs([...rows, { name: 'slow' }], jobs, 2)).toBe(2 * 2_000)
    expect(book.batchMs([], jobs, 2)).toBe(0)
  })

  it('claims `concurrency` jobs until every name has a pace, then as many as fit in the time left', () => {
    const book = new DurationBook()
    expect(book.batchSize(['quick'], 10, 200, 60_000)).toBe(10)
    book.record('quick', 100)
    // 160 ms a job: 60 s hold 375 waves of 10, capped at 200.
    expect(book.batchSize(['quick'], 10, 200, 60_000)).toBe(200)
    expect(book.batchSize(['quick'], 10, 200, 800)).toBe(50)
    expect(book.batchSize(['quick', 'never-seen'], 10, 200, 60_000)).toBe(10)
    // Never below concurrency (bounded by max), even with no time left.
    expect(book.batchSize(['quick'], 10, 200, 0)).toBe(10)
    expect(book.batchSize(['quick'], 10, 4, 0)).toBe(4)
  })
})
