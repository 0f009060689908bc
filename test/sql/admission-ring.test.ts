/**
 * Admission's turn order (admission_room): each queue's partitions sit on a ring, and each claim
 * goes on from the partition after the last one the queue's previous claim took (round robin).
 * Nothing a claim updates on a partition is indexed, so those updates stay on the row's page.
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

interface Partition {
  partition_key: string
  ring: number
}

/** 40 partitions of one fair policy, each with `jobs` due jobs; returned in ring order. */
async function seed(jobs = 2): Promise<Partition[]> {
  for (let i = 0; i < 40; i++) {
    const key = `tenant-${i}`
    await s.rows.partition({ policy: 'send', partitionKey: key, queue: 'q', quantum: 1 })
    for (let j = 0; j < jobs; j++)
      await s.rows.ready({ queue: 'q', name: 'send', policy: 'send', partitionKey: key })
  }
  return s.sql<Partition>(
    'SELECT partition_key, ring FROM $t.partitions ORDER BY ring, policy, partition_key',
  )
}

const ROOM = `SELECT partition_key FROM $t.admission_room(p_open => '{q}', p_limit => $1)`

/** One claim's partitions, as admission_room picks them (its locks end with the statement). */
const room = async (limit: number): Promise<string[]> =>
  (await s.sql<{ partition_key: string }>(ROOM, [limit])).map((r) => r.partition_key)

const place = async (): Promise<string | undefined> =>
  (await s.sql<{ partition_key: string }>('SELECT partition_key FROM $t.partition_turns'))[0]?.partition_key

/** Sets queue q's place on the ring at a partition, as a claim that took it last leaves it. */
const placeAt = (at: Partition): Promise<unknown> =>
  s.sql(`INSERT INTO $t.partition_turns (queue, ring, policy, partition_key) VALUES ('q', $1, 'send', $2)`, [
    at.ring,
    at.partition_key,
  ])

describe('the ring of partitions', () => {
  it("indexes none of the columns a claim's charge updates", async () => {
    const indexed = await s.sql<{ column: string }>(
      `SELECT DISTINCT a.attname AS column
       FROM pg_index i
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
       WHERE i.indrelid = '$t.partitions'::regclass
       ORDER BY 1`,
    )
    expect(indexed.map((r) => r.column)).toEqual(['partition_key', 'policy', 'queue', 'ring'])
  })

  it("a claim's charge is a HOT update: the partitions' indexes get no new entry", async () => {
    await seed(1)
    const keys = await room(10)
    // Charged in a transaction of its own, which reads its own counts of updates.
    const client = await s.pool.connect()
    try {
      await client.query('BEGIN')
      await client.query(`SELECT ${s.t}.admission_charge(array_fill('send'::text, ARRAY[10]), $1::text[])`, [
        keys,
      ])
      const { rows } = await client.query<{ updated: number; hot: number }>(
        `SELECT n_tup_upd::int AS updated, n_tup_hot_upd::int AS hot FROM pg_stat_xact_user_tables
         WHERE relid = '${s.t}.partitions'::regclass`,
      )
      await client.query('COMMIT')
      expect(rows).toEqual([{ updated: 10, hot: 10 }])
    } finally {
      client.release()
    }
  })

  it('round robin: claims of 10 take the ring in order, 40 partitions in 4 claims; claims of 1 one each', async () => {
    const ring = (await seed(3)).map((p) => p.partition_key)
    for (let c = 0; c < 4; c++) {
      expect((await room(10)).sort()).toEqual(ring.slice(10 * c, 10 * c + 10).sort())
      expect(await place()).toBe(ring[10 * c + 9])
    }
    // Around again, one partition per claim.
    for (let c = 0; c < 45; c++) expect(await room(1)).toEqual([ring[c % 40]])
  })

  it("wraps around the ring's end, and a partition sharing the place's point of the ring comes after it", async () => {
    const ring = await seed()
    // The place is the 35th partition: a claim of 10 takes the last 5, then the first 5.
    await placeAt(ring[34]!)
    expect((await room(10)).sort()).toEqual(
      [...ring.slice(35), ...ring.slice(0, 5)].map((p) => p.partition_key).sort(),
    )
    expect(await place()).toBe(ring[4]!.partition_key)
    // A place at the 8th partition's point of the ring but before it in (policy, key) order, as a
    // partition sharing that point would leave: the 8th comes next.
    await s.sql(`UPDATE $t.partition_turns SET ring = $1, policy = 'send', partition_key = ''`, [
      ring[7]!.ring,
    ])
    expect(await room(1)).toEqual([ring[7]!.partition_key])
  })

  it('a claim locks only the partitions it takes: the arc before the place only for what the arc after it left short', async () => {
    const ring = await seed()
    await placeAt(ring[34]!)
    const client = await s.pool.connect()
    try {
      for (const [limit, taken] of [
        [3, ring.slice(35, 38)],
        [10, [...ring.slice(35), ...ring.slice(0, 5)]],
      ] as const) {
        await client.query('BEGIN')
        const { rows } = await client.query<{ partition_key: string }>(
          `SELECT partition_key FROM ${s.t}.admission_room(p_open => '{q}', p_limit => $1)`,
          [limit],
        )
        // What another session cannot lock is what the claim holds.
        const free = await s.sql<{ partition_key: string }>(
          'SELECT partition_key FROM $t.partitions FOR UPDATE SKIP LOCKED',
        )
        const held = ring.map((p) => p.partition_key).filter((k) => !free.some((f) => f.partition_key === k))
        await client.query('ROLLBACK')
        const keys = taken.map((p) => p.partition_key).sort()
        expect(rows.map((r) => r.partition_key).sort()).toEqual(keys)
        expect(held.sort()).toEqual(keys)
      }
    } finally {
      client.release()
    }
  })

  it('each queue of a claim goes round its own ring from its own place', async () => {
    for (const queue of ['a', 'b'])
      for (let i = 0; i < 6; i++) {
        await s.rows.partition({ policy: `send-${queue}`, partitionKey: `p${i}`, queue, quantum: 1 })
        await s.rows.ready({ queue, name: `send-${queue}`, policy: `send-${queue}`, partitionKey: `p${i}` })
      }
    const ring = async (queue: string) =>
      (
        await s.sql<{ partition_key: string }>(
          'SELECT partition_key FROM $t.partitions WHERE queue = $1 ORDER BY ring, policy, partition_key',
          [queue],
        )
      ).map((r) => r.partition_key)
    const [a, b] = [await ring('a'), await ring('b')]
    const taken = async () =>
      s.sql<{ queue: string; partition_key: string }>(
        `SELECT queue, partition_key FROM $t.admission_room(p_open => '{a,b}', p_limit => 4) ORDER BY queue, partition_key`,
      )
    const expected = (from: number) => [
      ...[0, 1, 2, 3].map((k) => ({ queue: 'a', partition_key: a[(from + k) % 6]! })),
      ...[0, 1, 2, 3].map((k) => ({ queue: 'b', partition_key: b[(from + k) % 6]! })),
    ]
    const sorted = (rows: { queue: string; partition_key: string }[]) =>
      rows.sort((x, y) => x.queue.localeCompare(y.queue) || x.partition_key.localeCompare(y.partition_key))
    expect(await taken()).toEqual(sorted(expected(0)))
    // The second claim goes on from each queue's 4th partition, around the end of each ring.
    expect(await taken()).toEqual(sorted(expected(4)))
    expect(await s.sql('SELECT queue, partition_key FROM $t.partition_turns ORDER BY queue')).toEqual([
      { queue: 'a', partition_key: a[1] },
      { queue: 'b', partition_key: b[1] },
    ])
  })

  // Two claims at once, on two connections: the queue's first claims (no place yet), and later ones.
  for (const [when, before] of [
    ['first', 0],
    ['later', 1],
  ] as const) {
    it(`${when} claims: a claim made while another of the queue holds its partitions takes the next ones, and the place moves once`, async () => {
      const ring = (await seed()).map((p) => p.partition_key)
      for (let c = 0; c < before; c++) await room(10)
      const from = 10 * before
      const first = await s.pool.connect()
      try {
        await first.query('BEGIN')
        const held = (await first.query<{ partition_key: string }>(ROOM.replaceAll('$t', s.t), [10])).rows
        expect(held.map((r) => r.partition_key).sort()).toEqual(ring.slice(from, from + 10).sort())
        // The second claim neither waits nor takes the first one's partitions.
        expect((await room(10)).sort()).toEqual(ring.slice(from + 10, from + 20).sort())
        await first.query('COMMIT')
      } finally {
        first.release()
      }
      // The first claim moved the place; the second, which found it held, left it.
      expect(await place()).toBe(ring[from + 9])
      expect((await room(10)).sort()).toEqual(ring.slice(from + 10, from + 20).sort())
    })
  }
})
