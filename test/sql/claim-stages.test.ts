/**
 * The claim's own stages (claim_open, claim_pick in claim_stages.sql; claim_lease in
 * claim.sql), each called alone on seeded rows with its named parameters. test/sql/claim.test.ts
 * covers them composed by claim().
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await s.cleanup(context)
})

const INV = 'drn_stages'

describe('claim_open', () => {
  const open = (
    invocation: string,
    queues: string[],
    { untilMs = 30_000, limit = 10, defer = [] as string[] } = {},
  ) =>
    s
      .sql<{
        open: string[]
        gated: boolean
        ids: string[] | null
        single: boolean[] | null
        cut_queues: string[] | null
        cut_names: string[] | null
      }>(
        `SELECT open, gated, ids::text[] AS ids, single, cut_queues, cut_names
         FROM $t.claim_open(p_queues => $2::text[], p_invocation => $1, p_priority => 0,
           p_until => now() + $3 * interval '1 millisecond', p_jobs_done => 7, p_limit => $4, p_defer => $5::text[])`,
        [invocation, queues, untilMs, limit, defer],
      )
      .then((rows) => rows[0]!)

  it('registers the invocation, then renews it', async () => {
    await open(INV, ['a'], { untilMs: 1_000 })
    await open(INV, ['a'], { untilMs: 60_000 })
    const rows = await s.sql<{ id: string; jobs_done: number; left_s: number }>(
      'SELECT id, jobs_done, extract(epoch FROM expires_at - now())::float8 AS left_s FROM $t.invocations',
    )
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ id: INV, jobs_done: 7 })
    expect(rows[0]!.left_s).toBeGreaterThan(50)
  })

  it("takes a single-consumer queue's lease when it is free or run out, never another's live one; opens only those it holds", async () => {
    await s.rows.queue({ name: 'serial', singleConsumer: true })
    await s.rows.queue({ name: 'taken', singleConsumer: true })
    await s.rows.queue({ name: 'stale', singleConsumer: true })
    await s.rows.queueLease({ queue: 'taken', holder: 'drn_other', expiresInMs: 60_000 })
    await s.rows.queueLease({ queue: 'stale', holder: 'drn_gone', expiresInMs: -1_000 })
    const job = await s.rows.ready({ queue: 'serial' })
    await s.rows.ready({ queue: 'taken' })
    const got = await open(INV, ['serial', 'taken', 'stale'])
    expect(got).toMatchObject({ gated: false, ids: [job.id], single: [true] })
    expect([...got.open].sort()).toEqual(['serial', 'stale'])
    expect(await s.sql('SELECT queue, holder FROM $t.queue_leases ORDER BY queue')).toEqual([
      { queue: 'serial', holder: INV },
      { queue: 'stale', holder: INV },
      { queue: 'taken', holder: 'drn_other' },
    ])
  })

  it("two drains racing for a free single-consumer queue: the second waits on the first's lease, then opens nothing", async () => {
    await s.rows.queue({ name: 'serial', singleConsumer: true })
    const job = await s.rows.ready({ queue: 'serial' })
    const first = await s.pool.connect()
    const second = await s.pool.connect()
    const openOn = (c: typeof first, invocation: string) =>
      c
        .query<{ open: string[]; ids: string[] | null }>(
          `SELECT open, ids::text[] AS ids
           FROM ${s.t}.claim_open(ARRAY['serial'], $1, 0, now() + interval '30 seconds', 0, 10, '{}')`,
          [invocation],
        )
        .then((r) => r.rows[0]!)
    try {
      await first.query('BEGIN')
      expect(await openOn(first, 'drn_first')).toEqual({ open: ['serial'], ids: [job.id] })
      const pid = await s.pidOf(second)
      const opened = openOn(second, 'drn_second')
      // The second's upsert of the lease waits for the first's insert to commit or roll back.
      await s.waitsOnLock(pid)
      await first.query('COMMIT')
      expect(await opened).toEqual({ open: [], ids: null })
      expect(await s.sql('SELECT queue, holder FROM $t.queue_leases')).toEqual([
        { queue: 'serial', holder: 'drn_first' },
      ])
    } finally {
      await first.query('ROLLBACK').catch(() => {})
      first.release()
      second.release()
    }
  })

  it('opens no queue that is paused, tripped, held or served by a higher-priority drain', async () => {
    await s.rows.queue({ name: 'paused', paused: true })
    await s.rows.queue({ name: 'tripped', breakerThreshold: 3, trips: 1, breakerOpenForMs: 60_000 })
    await s.rows.queue({ name: 'held', heldForMs: 60_000 })
    await s.rows.queue({ name: 'closed-then', breakerThreshold: 3, trips: 1, breakerOpenForMs: -1_000 })
    await s.rows.invocation({ id: 'drn_high', queues: ['served'], priority: 5 })
    await s.rows.invocation({ id: 'drn_high_gone', queues: ['fresh'], priority: 5, expiresInMs: -1_000 })
    const got = await open(INV, ['paused', 'tripped', 'held', 'closed-then', 'served', 'fresh', 'unsynced'])
    expect([...got.open].sort()).toEqual(['closed-then', 'fresh', 'unsynced'])
  })

  it('walks the plain path itself: due jobs in claim order up to the limit, stopping before a job it must defer', async () => {
    const late = await s.rows.ready({ queue: 'a', priority: 10, dueInMs: -1_000 })
    const first = await s.rows.ready({ queue: 'a', priority: 5, dueInMs: -1_000 })
    const early = await s.rows.ready({ queue: 'a', priority: 10, dueInMs: -5_000 })
    const other = await s.rows.ready({ queue: 'b', priority: 7 })
    await s.rows.ready({ queue: 'b', name: 'slow', priority: 8 })
    await s.rows.ready({ queue: 'b', priority: 9 })
    await s.rows.scheduled({ queue: 'a', priority: 0 })
    await s.rows.leased(INV, { queue: 'a', priority: 0 })
    expect(await open(INV, ['a', 'b'], { limit: 3, defer: ['slow'] })).toMatchObject({
      gated: false,
      ids: [first.id, other.id, early.id],
      cut_queues: ['b'],
      cut_names: ['slow'],
    })
    expect((await open(INV, ['a'], { limit: 10 })).ids).toEqual([first.id, early.id, late.id])
  })

  it('leaves the walk to claim_pick when an open queue has a global cap or admission partitions', async () => {
    await s.rows.queue({ name: 'capped', globalCap: 2 })
    await s.rows.ready({ queue: 'capped' })
    await s.rows.partition({ policy: 'send', partitionKey: 'acme', queue: 'admitting' })
    await s.rows.ready({ queue: 'plain' })
    expect(await open(INV, ['capped', 'plain'])).toMatchObject({ gated: true, ids: null })
    expect(await open(INV, ['admitting', 'plain'])).toMatchObject({ gated: true, ids: null })
    expect(await open(INV, ['plain'])).toMatchObject({ gated: false })
    // A gated queue that is closed does not gate the claim.
    await s.sql(`UPDATE $t.queues SET paused = true WHERE name = 'capped'`)
    expect(await open(INV, ['capped', 'plain'])).toMatchObject({ open: ['plain'], gated: false })
  })

  it("looks up the open queues' partitions on the index, never reading other queues' partitions", async () => {
    // Another queue's 5,000 partitions, analyzed, as a deployment with admission policies has them.
    await s.sql(
      `INSERT INTO $t.partitions (policy, partition_key, queue)
       SELECT 'send', 'p' || i, 'admitting' FROM generate_series(1, 5000) i`,
    )
    await s.sql('ANALYZE $t.partitions')
    await s.rows.ready({ queue: 'plain' })
    const client = await s.pool.connect()
    // The session's sequential scans of the table not yet reported (earlier statements' included).
    const scans = async (): Promise<number> =>
      (
        await client.query<{ n: number }>(
          `SELECT seq_scan::int AS n FROM pg_stat_xact_user_tables WHERE relid = '${s.t}.partitions'::regclass`,
        )
      ).rows[0]!.n
    try {
      await client.query('BEGIN')
      const before = await scans()
      for (const queues of [['plain'], ['plain', 'admitting']]) {
        const { rows } = await client.query<{ gated: boolean }>(
          `SELECT gated FROM ${s.t}.claim_open($1::text[], $2, 0, now() + interval '30 seconds', 0, 10, '{}')`,
          [queues, INV],
        )
        expect(rows[0]!.gated).toBe(queues.includes('admitting'))
      }
      const after = await scans()
      await client.query('ROLLBACK')
      expect(after - before).toBe(0)
    } finally {
      client.release()
    }
  })
})

describe('claim_pick', () => {
  const pick = (open: string[], limit: number, defer: string[] = []) =>
    s
      .sql<{
        ids: string[] | null
        cut_queues: string[] | null
        cut_names: string[] | null
        capped: boolean | null
      }>(
        `SELECT ids::text[] AS ids, cut_queues, cut_names, capped
         FROM $t.claim_pick(p_open => $1::text[], p_limit => $2, p_defer => $3::text[])`,
        [open, limit, defer],
      )
      .then((rows) => rows[0]!)

  it('picks due jobs in claim order up to the limit, and nothing it may not take', async () => {
    const late = await s.rows.ready({ queue: 'a', priority: 10, dueInMs: -1_000 })
    const first = await s.rows.ready({ queue: 'a', priority: 5, dueInMs: -1_000 })
    const early = await s.rows.ready({ queue: 'a', priority: 10, dueInMs: -5_000 })
    await s.rows.scheduled({ queue: 'a', priority: 0 })
    await s.rows.leased(INV, { queue: 'a', priority: 0 })
    await s.rows.ready({ queue: 'closed' })
    expect(await pick(['a'], 2)).toMatchObject({ ids: [first.id, early.id], cut_queues: null })
    expect((await pick(['a'], 10)).ids).toEqual([first.id, early.id, late.id])
  })

  it('skips rows another claim holds, and stops in a queue before a job it must defer', async () => {
    const held = await s.rows.ready({ queue: 'a', name: 'quick', priority: 1 })
    const next = await s.rows.ready({ queue: 'a', name: 'quick', priority: 2 })
    await s.rows.ready({ queue: 'a', name: 'slow', priority: 3 })
    await s.rows.ready({ queue: 'a', name: 'quick', priority: 4 })
    const other = await s.pool.connect()
    try {
      await other.query('BEGIN')
      await other.query(`SELECT 1 FROM ${s.t}.jobs WHERE id = $1 FOR UPDATE`, [held.id])
      expect(await pick(['a'], 10, ['slow'])).toMatchObject({
        ids: [next.id],
        cut_queues: ['a'],
        cut_names: ['slow'],
      })
    } finally {
      await other.query('ROLLBACK')
      other.release()
    }
  })
})

describe('claim_lease', () => {
  it("writes each leased job's new version on the job's own page, not on another", async () => {
    // Jobs enqueued as one statement fill the table's pages as densely as its fillfactor lets
    // them. A lease whose new version does not fit on the page moves the row to another page,
    // which costs a second WAL record (the old version locked while the page is left) and
    // a larger update record.
    await s.sql(
      `INSERT INTO $t.jobs (queue, name, payload)
       SELECT 'q', 'send-email', jsonb_build_object('to', 'user' || n || '@example.com', 'n', n, 'pad', repeat('x', 60))
       FROM generate_series(1, 400) n`,
    )
    const before = await s.sql<{ id: string; page: number }>(
      'SELECT id::text, (ctid::text::point)[0]::int AS page FROM $t.jobs ORDER BY id',
    )
    const pages = new Set(before.map((r) => r.page))
    expect(pages.size).toBeGreaterThan(3)
    const due = new Date()
    await s.sql(
      `SELECT count(*) FROM $t.claim_lease(
         p_ids => $1::bigint[], p_due => $2::timestamptz[], p_single => $3::boolean[], p_skip => '{}',
         p_until => now() + interval '30 seconds', p_invocation => $4, p_more => false)`,
      [
        before.map((r) => r.id),
        before.map(() => due),
        before.map(() => false),
        'drn_0b6f3c1e-4f7a-4c55-9d8e-2a7f6c1d9e44',
      ],
    )
    const after = await s.sql<{ id: string; page: number; leased: boolean }>(
      'SELECT id::text, (ctid::text::point)[0]::int AS page, lease_token IS NOT NULL AS leased FROM $t.jobs ORDER BY id',
    )
    expect(after.every((r) => r.leased)).toBe(true)
    const moved = after.filter((r, i) => r.page !== before[i]!.page)
    expect(moved).toEqual([])
  })

  it('leases the picked jobs but the skipped ones, counting their attempt; returns the claim rows', async () => {
    const a = await s.rows.ready({ queue: 'q', attempts: 1 })
    const b = await s.rows.ready({ queue: 'q' })
    const skipped = await s.rows.ready({ queue: 'q' })
    const due = new Date(Date.now() - 2_000)
    const rows = await s.sql<{
      id: string
      attempts: number
      more: boolean
      due_at: Date
      in_order: boolean
    }>(
      `SELECT id, attempts, more, due_at, in_order FROM $t.claim_lease(
         p_ids => $1::bigint[], p_due => $2::timestamptz[], p_single => $3::boolean[], p_skip => $4::bigint[],
         p_until => now() + interval '30 seconds', p_invocation => $5, p_more => true)
       ORDER BY id`,
      [[a.id, b.id, skipped.id], [due, due, due], [false, true, false], [skipped.id], INV],
    )
    expect(rows.map(({ id, attempts, more, in_order }) => ({ id, attempts, more, in_order }))).toEqual([
      { id: a.id, attempts: 2, more: true, in_order: false },
      { id: b.id, attempts: 1, more: true, in_order: true },
    ])
    expect(rows[0]!.due_at.getTime()).toBe(due.getTime())
    const jobs = await s.sql<{
      id: string
      leased_by: string | null
      started: boolean
      lease_s: number | null
    }>(
      `SELECT id::text, leased_by, started_at IS NOT NULL AS started,
              CASE WHEN lease_token IS NOT NULL THEN extract(epoch FROM lease_until - now())::float8 END AS lease_s
       FROM $t.jobs ORDER BY id`,
    )
    expect(jobs.map(({ id, leased_by, started }) => ({ id, leased_by, started }))).toEqual([
      { id: a.id, leased_by: INV, started: true },
      { id: b.id, leased_by: INV, started: true },
      { id: skipped.id, leased_by: null, started: false },
    ])
    expect(jobs[0]!.lease_s).toBeGreaterThan(25)
    // One token for the claim, and its lease row: the queue, the lease's end and the jobs leased.
    expect(
      await s.sql(
        `SELECT l.queue, l.ids::text[] AS ids, l.lease_until = j.lease_until AS same_end,
                (SELECT count(DISTINCT lease_token)::int FROM $t.jobs WHERE lease_token IS NOT NULL) AS tokens
         FROM $t.claim_leases l JOIN $t.jobs j ON j.lease_token = l.token AND j.id = $1`,
        [a.id],
      ),
    ).toEqual([{ queue: 'q', ids: [a.id, b.id].sort(), same_end: true, tokens: 1 }])
  })

  it("charges an admitted job's partition a token", async () => {
    await s.rows.partition({ policy: 'send', partitionKey: 'acme', queue: 'q', rate: 5, burst: 5, tokens: 5 })
    const job = await s.rows.ready({ queue: 'q', name: 'send', policy: 'send', partitionKey: 'acme' })
    await s.sql(
      `SELECT * FROM $t.claim_lease($1::bigint[], ARRAY[now()], ARRAY[false], '{}', now() + interval '30 seconds', $2, false)`,
      [[job.id], INV],
    )
    const [p] = await s.sql<{ tokens: number }>(`SELECT tokens::float8 AS tokens FROM $t.partitions`)
    expect(p!.tokens).toBeGreaterThanOrEqual(4)
    expect(p!.tokens).toBeLessThan(4.5)
  })
})
