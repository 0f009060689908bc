/**
 * `sluice policies` and `sluice partitions` end to end, as spawned processes, on partitions a
 * drain left throttled: the tables, the reasons, the pause, resume and cap changes, and bad
 * input exiting 2.
 */
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { z } from 'zod'
import { parseCommandArgs } from '../../src/cli/args.js'
import { COMMANDS } from '../../src/cli/commands/index.js'
import { explain } from '../../src/cli/errors.js'
import { defineJob, type PartitionRow, type PolicyRow } from '../../src/index.js'
import { fewAtATime, runCli } from '../helpers/cli.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'

const config = fileURLToPath(new URL('fixtures/admission.config.mjs', import.meta.url))

// The jobs of the fixture config, as this process enqueues and drains them.
const send = defineJob({
  name: 'send',
  queue: 'outbound',
  input: z.object({ account: z.string() }),
  admission: {
    partition: (input) => input.account,
    throttle: { rate: 1, per: 60_000 },
    concurrency: { max: 3 },
    globalCap: { max: 10 },
  },
  run: () => {},
})
const single = defineJob({
  name: 'single',
  input: z.object({}),
  admission: { concurrency: { max: 1 } },
  run: () => {},
})

let t: TestSluice
const cli = (...args: string[]) =>
  runCli(['--config', config, ...args], { env: { DATABASE_URL: databaseUrl, SLUICE_SCHEMA: t.schema } })
const state = async (policy: string, key: string) =>
  (
    await t.sql<{ paused: boolean; cap_override: number | null }>(
      'SELECT paused, cap_override FROM $schema.partitions WHERE policy = $1 AND partition_key = $2',
      [policy, key],
    )
  )[0]

beforeAll(async () => {
  t = await makeSluice({ jobs: [send, single] })
  await t.sluice.enqueueMany(send, [{ account: 'a' }, { account: 'a' }, { account: 'b c' }])
  await t.sluice.enqueue(single, {})
  // One token each: a's second job waits for the throttle.
  expect((await t.sluice.drain()).completed).toBe(3)
})
afterAll(() => t.cleanup())

test('policies and partitions list what waits and why', async () => {
  const [policies, policiesHuman, parts, partsHuman] = await fewAtATime([
    () => cli('policies', '--json'),
    () => cli('policies'),
    () => cli('partitions', 'send', '--json'),
    () => cli('partitions', 'send'),
  ])
  expect(policies.code).toBe(0)
  expect(policies.json<{ policies: PolicyRow[] }>().policies).toEqual([
    {
      name: 'send',
      queue: 'outbound',
      globalMax: 10,
      partitions: 2,
      pending: 1,
      inFlight: 0,
      pausedPartitions: 0,
    },
    {
      name: 'single',
      queue: 'default',
      globalMax: null,
      partitions: 1,
      pending: 0,
      inFlight: 0,
      pausedPartitions: 0,
    },
  ])
  expect(policiesHuman.code).toBe(0)
  expect(policiesHuman.stdout).toMatch(/policy +queue +partitions +paused +pending +in flight +global cap/)
  expect(policiesHuman.stdout).toMatch(/send +outbound +2 +0 +1 +0 +10/)

  expect(parts.code).toBe(0)
  const rows = parts.json<{ action: string; partitions: PartitionRow[] }>().partitions
  expect(rows.map((r) => [r.partition, r.pending, r.cap])).toEqual([
    ['a', 1, 3],
    ['b c', 0, 3],
  ])
  expect(rows[0]!.reason).toMatch(/^throttled: next token in \d+(\.\d)? (s|min)$/)
  expect(rows[1]!.reason).toBeNull()
  expect(partsHuman.code).toBe(0)
  expect(partsHuman.stdout).toMatch(
    /^ +partition +pending +in flight +cap +tokens +lag +paused +why not running$/m,
  )
  expect(partsHuman.stdout).toMatch(/^ +a +1 +0 +3 +0\.\d +— +no +throttled: next token in /m)
  expect(partsHuman.stdout).toContain('"b c"')
})

test('--pause, --resume and --cap change the partition; the list shows it', async () => {
  const paused = await cli('partitions', 'send', '--pause', 'a')
  expect(paused.code).toBe(0)
  expect(paused.stdout).toContain('Paused partition a of policy send')
  expect(await state('send', 'a')).toEqual({ paused: true, cap_override: null })
  const listed = await cli('partitions', 'send', '--limit', '1', '--json')
  expect(listed.json<{ partitions: PartitionRow[] }>().partitions).toEqual([
    expect.objectContaining({ partition: 'a', paused: true, reason: 'partition paused' }),
  ])

  const [resumed, capped, single0] = await fewAtATime([
    () => cli('partitions', 'send', '--resume', 'a', '--json'),
    () => cli('partitions', 'send', '--cap', 'b c=0'),
    () => cli('partitions', 'single', '--pause', ''),
  ])
  expect(resumed.code).toBe(0)
  expect(resumed.json()).toEqual({ action: 'resume', policy: 'send', partition: 'a' })
  expect(await state('send', 'a')).toEqual({ paused: false, cap_override: null })
  expect(capped.code).toBe(0)
  expect(capped.stdout).toContain('Capped partition "b c" of policy send at 0')
  expect(await state('send', 'b c')).toEqual({ paused: false, cap_override: 0 })
  expect(single0.code).toBe(0)
  expect(single0.stdout).toContain('Paused partition "" of policy single')
  expect(await state('single', '')).toEqual({ paused: true, cap_override: null })

  const cleared = await cli('partitions', 'send', '--cap', 'b c=none')
  expect(cleared.code).toBe(0)
  expect(cleared.stdout).toContain('Cleared the cap of partition "b c"')
  expect(await state('send', 'b c')).toEqual({ paused: false, cap_override: null })
})

test('unknown names exit 2 with the closest known one; so does a bad flag', async () => {
  const [unknownPartition, unknownPolicy, badCap] = await fewAtATime([
    () => cli('partitions', 'send', '--pause', 'ab', '--json'),
    () => cli('partitions', 'sned'),
    () => cli('partitions', 'send', '--cap', 'a=-1'),
  ])
  expect([unknownPartition, unknownPolicy, badCap].map((r) => r.code)).toEqual([2, 2, 2])
  expect(unknownPartition!.json()).toMatchObject({
    error: { code: 'NOT_FOUND', message: 'No partition ab of admission policy "send".' },
  })
  expect(unknownPartition!.json<{ error: { hint: string } }>().error.hint).toContain('Did you mean a?')
  expect(unknownPolicy!.stderr).toContain('No admission policy named "sned"')
  expect(unknownPolicy!.stderr).toContain('Did you mean "send"?')
  expect(badCap!.stderr).toContain('from 0 to 1000000, or none')
  // Nothing changed.
  expect(await state('send', 'a')).toEqual({ paused: false, cap_override: null })
})

test('bad arguments are usage errors (exit 2) before anything is loaded', async () => {
  const parse = async (name: string, ...argv: string[]) => {
    const command = COMMANDS.get(name)!
    try {
      return { args: await command.parse(parseCommandArgs(name, argv, command.options)) }
    } catch (error) {
      return explain(error)
    }
  }
  const refused = async (name: string, argv: string[], says: string) => {
    const outcome = await parse(name, ...argv)
    expect(outcome, argv.join(' ')).toMatchObject({ exitCode: 2 })
    expect((outcome as { message: string }).message, argv.join(' ')).toContain(says)
  }
  await refused('partitions', [], 'partitions needs a policy name')
  await refused('partitions', [''], 'The policy name must not be empty')
  await refused('partitions', ['send', 'extra'], 'Unexpected argument "extra"')
  await refused('partitions', ['send', '--cap', 'a'], '--cap takes <partition>=<n|none>')
  await refused('partitions', ['send', '--cap', 'a=1000001'], 'from 0 to 1000000, or none')
  await refused('partitions', ['send', '--cap', 'a=1.5'], 'from 0 to 1000000, or none')
  await refused('partitions', ['send', '--cap', 'a=x'], 'from 0 to 1000000, or none')
  await refused('partitions', ['send', '--pause', 'x'.repeat(513)], 'at most 512 characters')
  await refused(
    'partitions',
    ['send', '--pause', 'a', '--resume', 'a'],
    '--pause and --resume do not combine',
  )
  await refused('partitions', ['send', '--limit', '0'], '--limit must be a whole number, at least 1')
  await refused('partitions', ['send', '--limit', '1001'], '--limit must be at most 1000')
  await refused('partitions', ['send', '--pause', 'a', '--limit', '5'], 'do not combine with --pause')
  await refused('partitions', ['send', '--bogus'], '`sluice partitions` has no flag --bogus.')
  await refused('policies', ['send'], 'takes no argument "send"')
  // A key holding "=" splits at the last one; the empty key is the default partition.
  expect(await parse('partitions', 'send', '--cap', 'k=v=none')).toEqual({
    args: { action: 'cap', policy: 'send', partition: 'k=v', cap: null },
  })
  expect(await parse('partitions', 'send', '--resume', '')).toEqual({
    args: { action: 'resume', policy: 'send', partition: '' },
  })
  expect(await parse('partitions', 'send')).toEqual({
    args: { action: 'list', policy: 'send', limit: 100, offset: 0 },
  })
})
