import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { patternProblem, topicProblem } from '../../src/events/topics.js'
import { defineSubscriber, patternRegex, topicMatches } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

// [pattern, topic, matches]
const CASES: [string, string, boolean][] = [
  ['orders.created', 'orders.created', true],
  ['orders.created', 'orders.updated', false],
  ['orders.created', 'orders.created.eu', false],
  ['orders.created', 'orders', false],
  ['orders.created', 'ordersXcreated', false], // the dot is a literal dot
  ['Orders.created', 'orders.created', false], // case-sensitive
  ['orders.*', 'orders.created', true],
  ['orders.*', 'orders.x', true],
  ['orders.*', 'orders', false], // * is exactly one word
  ['orders.*', 'orders.created.eu', false],
  ['*.created', 'orders.created', true],
  ['*.created', 'created', false],
  ['*.created', 'eu.orders.created', false],
  ['*', 'orders', true],
  ['*', 'orders.created', false],
  ['*.*.eu', 'orders.created.eu', true],
  ['*.*.eu', 'orders.eu', false],
  ['#', 'orders', true],
  ['#', 'orders.created.eu', true],
  ['orders.#', 'orders', true], // # matches zero words
  ['orders.#', 'orders.created', true],
  ['orders.#', 'orders.created.eu.west', true],
  ['orders.#', 'ordersx.created', false],
  ['orders.#', 'payments.orders', false],
  ['#.created', 'created', true],
  ['#.created', 'orders.created', true],
  ['#.created', 'eu.orders.created', true],
  ['#.created', 'orders.created.eu', false],
  ['orders.#.eu', 'orders.eu', true],
  ['orders.#.eu', 'orders.created.eu', true],
  ['orders.#.eu', 'orders.a.b.c.eu', true],
  ['orders.#.eu', 'orders.created.us', false],
  ['#.orders.#', 'orders', true],
  ['#.orders.#', 'eu.orders.created', true],
  ['#.orders.#', 'eu.order.created', false],
  ['#.#', 'orders', true],
  ['*.#', 'orders', true],
  ['#.*', 'orders.created', true],
  ['*.#.*', 'orders', false], // at least two words
  ['*.#.*', 'orders.created', true],
  ['orders.*.#', 'orders', false],
  ['orders.*.#', 'orders.created.eu', true],
  ['a.b', 'a.bc', false], // anchored at the end
  ['b', 'ab', false], // anchored at the start
  ['order_s.cre-ated', 'order_s.cre-ated', true],
  ['1.2.3', '1.2.3', true],
  // Many `#`: a backtracking regex engine takes seconds on these; neither matcher here does.
  [`${'#.a.'.repeat(10)}#.x`, `${'a.'.repeat(31)}b`, false],
  [`${'#.a.'.repeat(10)}#.x`, `${'a.'.repeat(31)}x`, true],
]

const BAD_PATTERNS = [
  '',
  '.',
  'orders.',
  '.orders',
  'orders..created',
  'orders.*x',
  'orders.#x',
  'x*',
  '**',
  '##',
  'a b',
  'ordérs',
  'a.$',
  '(a)',
  'a|b',
  'a.^',
  'a.[b]',
  'a\\.b',
  Array(33).fill('a').join('.'),
  'a'.repeat(256),
]
const BAD_TOPICS = [...BAD_PATTERNS, 'orders.*', 'orders.#', '*', '#', 'orders.created\n']

test(`the matcher's table: ${CASES.length} cases, in process`, () => {
  expect(CASES.length).toBeGreaterThanOrEqual(30)
  for (const [pattern, topic, expected] of CASES) {
    expect([pattern, topic, topicMatches(pattern, topic)]).toEqual([pattern, topic, expected])
  }
})

test('invalid patterns and topics are refused, with the reason', () => {
  for (const bad of BAD_PATTERNS) {
    expect([bad, patternProblem(bad)]).toEqual([bad, expect.any(String)])
    expect(() => patternRegex(bad)).toThrow(expect.objectContaining({ code: 'INVALID_NAME' }))
    expect(() => defineSubscriber({ name: 'x', topic: bad, run: () => {} })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    )
  }
  for (const bad of BAD_TOPICS) expect([bad, topicProblem(bad)]).toEqual([bad, expect.any(String)])
  expect(patternProblem('orders..created')).toMatch(/empty words/)
  expect(topicProblem('orders.*')).toMatch(/no wildcards/)
  expect(topicProblem(Array(32).fill('a').join('.'))).toBeNull()
  expect(topicProblem('a'.repeat(255))).toBeNull()
})

describe('in PostgreSQL', () => {
  let env: TestSluice
  const patterns = [...new Set(CASES.map(([p]) => p))]
  const topics = [...new Set(CASES.map(([, t]) => t))]
  const subscriberOf = (pattern: string): string => `p${patterns.indexOf(pattern)}`

  beforeAll(async () => {
    env = await makeSluice({
      subscribers: patterns.map((topic) =>
        defineSubscriber({ name: subscriberOf(topic), topic, run: () => {} }),
      ),
    })
  })
  afterAll(() => env.cleanup())

  test('publish matches exactly the table, every case through the statement publish runs', async () => {
    for (const topic of topics) await env.sluice.publish(topic, null)
    const rows = await env.sql<{ topic: string; name: string }>(
      `SELECT payload->>'topic' AS topic, name FROM $schema.jobs`,
    )
    const got = new Set(rows.map((r) => `${r.name} ${r.topic}`))
    for (const [pattern, topic, expected] of CASES) {
      expect([pattern, topic, got.has(`${subscriberOf(pattern)} ${topic}`)]).toEqual([
        pattern,
        topic,
        expected,
      ])
    }
  })

  test('the database and the in-process matcher agree on every pattern × topic pair', async () => {
    const rows = await env.sql<{ pattern: string; topic: string; matches: boolean }>(
      `SELECT s.pattern, t.topic, ('.' || t.topic) ~ s.regex AS matches
       FROM $schema.subscriptions s CROSS JOIN unnest($1::text[]) AS t(topic)`,
      [topics],
    )
    expect(rows).toHaveLength(patterns.length * topics.length)
    for (const row of rows) {
      expect([row.pattern, row.topic, row.matches]).toEqual([
        row.pattern,
        row.topic,
        topicMatches(row.pattern, row.topic),
      ])
    }
  })

  test('the two matchers agree on 40,000 random pattern × topic pairs', async () => {
    let seed = 42
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed % n
    }
    const words = (alphabet: string[]): string =>
      Array.from({ length: 1 + random(5) }, () => alphabet[random(alphabet.length)]).join('.')
    const randomPatterns = Array.from({ length: 200 }, () => words(['a', 'b', '*', '#']))
    const randomTopics = Array.from({ length: 200 }, () => words(['a', 'b']))
    const rows = await env.sql<{ p: number; t: number; matches: boolean }>(
      `SELECT p.i::int AS p, t.i::int AS t, ('.' || t.topic) ~ p.regex AS matches
       FROM unnest($1::text[]) WITH ORDINALITY AS p(regex, i) CROSS JOIN unnest($2::text[]) WITH ORDINALITY AS t(topic, i)`,
      [randomPatterns.map(patternRegex), randomTopics],
    )
    expect(rows).toHaveLength(40_000)
    const disagree = rows.filter(
      (r) => r.matches !== topicMatches(randomPatterns[r.p - 1]!, randomTopics[r.t - 1]!),
    )
    expect(disagree).toEqual([])
    // The sample is not trivial: both answers occur often.
    expect(rows.filter((r) => r.matches).length).toBeGreaterThan(2000)
    expect(rows.filter((r) => !r.matches).length).toBeGreaterThan(2000)
  })

  test('outbox_publish validates topics as the library does', async () => {
    for (const topic of [...topics, ...BAD_TOPICS]) {
      const outcome = await env.sql(`SELECT $schema.outbox_publish($1, 'null'::jsonb)`, [topic]).then(
        () => 'ok',
        (error: { code?: string }) => error.code,
      )
      expect([topic, outcome]).toEqual([topic, topicProblem(topic) === null ? 'ok' : '22023'])
    }
  })
})
