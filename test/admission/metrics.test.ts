/**
 * /metrics exports the partitions of admission policies: one family per gauge, labelled by
 * policy and partition, the 500 most recently active partitions at most, in the one statement
 * the scrape already sends.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type PartitionMetrics, toPrometheus } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, bearer } from '../helpers/http.js'
import { type RowFactory, rowFactory } from '../helpers/rows.js'

let t: TestSluice
let rows: RowFactory
beforeAll(async () => {
  t = await makeSluice({ jobs: [] })
  rows = rowFactory(t.admin, `"${t.schema}"`)
})
afterAll(() => t.cleanup())

const PARTITION_FAMILIES = [
  'sluice_partition_pending',
  'sluice_partition_in_flight',
  'sluice_partition_tokens',
  'sluice_partition_cap',
  'sluice_partition_ewma_lag_seconds',
  'sluice_partition_paused',
]

/** `family{policy,partition}` -> value, for the partition families; checks HELP and TYPE lines. */
function partitionSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>()
  const typed = new Set<string>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const meta = /^# (HELP|TYPE) (\w+) (.+)$/.exec(line)
    if (meta) {
      if (meta[1] === 'TYPE') typed.add(meta[2]!)
      if (meta[1] === 'HELP' && meta[2]!.startsWith('sluice_partition_'))
        expect(meta[3]).toContain('Only the 500 most recently active partitions')
      continue
    }
    const sample = /^(\w+)\{(.*)\} (\S+)$/.exec(line)
    expect(sample, line).not.toBeNull()
    expect(typed.has(sample![1]!), line).toBe(true)
    if (!sample![1]!.startsWith('sluice_partition_')) continue
    const labels = /^policy="((?:[^"\\\n]|\\["\\n])*)",partition="((?:[^"\\\n]|\\["\\n])*)"$/.exec(
      sample![2]!,
    )
    expect(labels, line).not.toBeNull()
    samples.set(`${sample![1]}{${labels![1]},${labels![2]}}`, Number(sample![3]))
  }
  return samples
}

test('per-partition gauges, labelled and escaped, from the one statement of the scrape', async () => {
  const weird = 'a"b\\c\nd'
  await rows.partition({
    policy: 'send',
    partitionKey: weird,
    rate: 2,
    perMs: 600_000,
    tokens: 0.5,
    maxInFlight: 3,
    adaptiveMin: 1,
    adaptiveCap: 2.5,
    ewmaLagMs: 1_500,
  })
  await rows.partition({ policy: 'send', partitionKey: 'plain', paused: true })
  const job = { name: 'send', policy: 'send' }
  await rows.job({ ...job, partitionKey: weird })
  await rows.scheduled({ ...job, partitionKey: weird })
  await rows.leased('inv-1', { ...job, partitionKey: weird })
  await rows.job({ ...job, partitionKey: 'plain' })

  t.statements.reset()
  const res = await appFor(t).request('/metrics', { headers: bearer() })
  expect(res.status).toBe(200)
  expect(t.statements.count).toBe(1)
  const text = await res.text()
  const samples = partitionSamples(text)
  const w = 'send,a\\"b\\\\c\\nd'
  expect(samples.get(`sluice_partition_pending{${w}}`)).toBe(2)
  expect(samples.get(`sluice_partition_in_flight{${w}}`)).toBe(1)
  expect(samples.get(`sluice_partition_tokens{${w}}`)).toBeGreaterThanOrEqual(0.5)
  expect(samples.get(`sluice_partition_tokens{${w}}`)).toBeLessThan(0.6)
  expect(samples.get(`sluice_partition_cap{${w}}`)).toBe(2)
  expect(samples.get(`sluice_partition_ewma_lag_seconds{${w}}`)).toBe(1.5)
  expect(samples.get(`sluice_partition_paused{${w}}`)).toBe(0)
  // A partition without a throttle, a cap or a lag has no sample for them.
  expect([...samples.keys()].filter((k) => k.endsWith('{send,plain}')).sort()).toEqual([
    'sluice_partition_in_flight{send,plain}',
    'sluice_partition_paused{send,plain}',
    'sluice_partition_pending{send,plain}',
  ])
  expect(samples.get('sluice_partition_paused{send,plain}')).toBe(1)
  for (const family of PARTITION_FAMILIES) expect(text).toContain(`# TYPE ${family} gauge`)
  // The queues' families are still there.
  expect(text).toMatch(/^sluice_jobs_ready\{queue="default"\} 2$/m)
})

test('at most the 500 most recently active partitions are exported', async () => {
  // 520 partitions, the n-th last active n minutes ago (by enqueue or by admission).
  await t.sql(
    `INSERT INTO $schema.partitions (policy, partition_key, queue, last_enqueued_at, last_admitted_at)
     SELECT 'many', 'k' || n, 'default',
            CASE WHEN n % 2 = 0 THEN now() - n * interval '1 minute' END,
            CASE WHEN n % 2 = 1 THEN now() - n * interval '1 minute' END
     FROM generate_series(1, 520) n`,
  )
  const { partitions } = await t.sluice.inspect.scrape()
  expect(partitions).toHaveLength(500)
  const many = new Set(partitions.filter((p) => p.policy === 'many').map((p) => p.partition))
  // The two of `send` are the most recent (enqueued now); then k1..k498.
  expect(many.size).toBe(498)
  expect(many.has('k1')).toBe(true)
  expect(many.has('k498')).toBe(true)
  expect(many.has('k499')).toBe(false)
})

test('toPrometheus leaves the partition families out when there are none', () => {
  expect(toPrometheus([])).not.toContain('sluice_partition_')
  const one: PartitionMetrics = {
    policy: 'p',
    partition: '',
    pending: 0,
    inFlight: 0,
    tokens: null,
    cap: null,
    ewmaLagSeconds: null,
    paused: false,
  }
  expect(toPrometheus([], [one])).toContain('sluice_partition_pending{policy="p",partition=""} 0')
})
