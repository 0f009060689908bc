/**
 * `sluice dlq retry` when a dead letter cannot take its unique key: the command's run, render
 * and exit code, on a real schema (the spawned CLI's flow is in commands.test.ts).
 */
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import type { RunContext } from '../../src/cli/command.js'
import { dlq } from '../../src/cli/commands/dlq.js'
import { EXIT } from '../../src/cli/errors.js'
import { defineJob } from '../../src/index.js'
import { quoteSchema } from '../../src/names.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { rowFactory } from '../helpers/rows.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const job = defineJob({
  name: 'sync',
  input: z.object({ k: z.string() }),
  unique: { key: (i) => `sync:${i.k}` },
  run: () => {},
})

test('retry says which dead letters it kept and why, and exits 1; a bulk retry walks past them', async () => {
  env = await makeSluice({ jobs: [job] })
  const rows = rowFactory(env.admin, quoteSchema(env.schema))
  const holder = (await env.sluice.enqueue(job, { k: 'a' })).id!
  const kept = [await rows.deadLetter({ name: 'sync', payload: { k: 'a' } })]
  const free = await rows.deadLetter({ name: 'sync', payload: { k: 'b' } })
  kept.push(await rows.deadLetter({ name: 'sync', payload: { k: 'a' } }))
  const ctx = { sluice: env.sluice } as RunContext

  const one = await dlq.run(ctx, { action: 'retry', ids: [kept[0]!, '999999999'], all: false })
  expect(one).toEqual({
    action: 'retry',
    ids: [],
    kept: [{ id: kept[0], reason: `unique key sync:a held by job ${holder}` }],
    missing: ['999999999'],
  })
  expect(dlq.render(one)).toBe(
    [
      'Nothing retried.',
      'Kept 1 dead letter where it was:',
      `  ${kept[0]}: unique key sync:a held by job ${holder}`,
      'No dead letter with id 999999999.',
    ].join('\n'),
  )
  expect(dlq.exitCode?.(one)).toBe(EXIT.FAILED)

  const all = await dlq.run(ctx, { action: 'retry', all: true, name: 'sync', limit: 10 })
  expect(all).toMatchObject({ ids: [free], kept: kept.map((id) => ({ id })), missing: [] })
  expect(dlq.render(all)).toContain(`Retried 1 dead letter: ${free}.\nThey are due now`)
  expect(await env.sql('SELECT id::text AS id FROM $schema.dead_letters ORDER BY id')).toEqual(
    kept.map((id) => ({ id })),
  )
})

test('a retry by filter with `before` walks past the dead letters it keeps, newest first', async () => {
  env = await makeSluice({ jobs: [job] })
  const rows = rowFactory(env.admin, quoteSchema(env.schema))
  await env.sluice.enqueue(job, { k: 'a' })
  const older = await rows.deadLetter({ name: 'sync', payload: { k: 'b' } })
  const newer = await rows.deadLetter({ name: 'sync', payload: { k: 'a' } })
  const first = await env.sluice.deadLetters.retry({ name: 'sync', limit: 1 })
  expect(first).toMatchObject({ requeued: [], kept: [{ id: newer }] })
  // Without `before` the next slice would meet the kept one again.
  expect(await env.sluice.deadLetters.retry({ name: 'sync', limit: 1 })).toMatchObject({
    kept: [{ id: newer }],
  })
  expect(await env.sluice.deadLetters.retry({ name: 'sync', limit: 1, before: newer })).toEqual({
    requeued: [older],
    kept: [],
  })
  await expect(env.sluice.deadLetters.retry({ name: 'sync', before: 'x' })).rejects.toMatchObject({
    code: 'INVALID_INPUT',
  })
})
