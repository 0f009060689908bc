import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, type Statement } from '../../src/index.js'
import { type ClaimedRow, claim, settle, settleAndClaim } from '../../src/sql/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

/**
 * Runs `statement` in a transaction of its own and says with what durability the transaction
 * would commit: a claim forgotten by a crashed server while its drain runs the job would let a
 * second drain run it at the same time, so every statement that claims must commit durably.
 */
async function commitsWith(
  e: TestSluice,
  statement: Statement,
): Promise<{ rows: ClaimedRow[]; synchronousCommit: string }> {
  const client = await e.admin.connect()
  try {
    await client.query('BEGIN')
    const { rows } = await client.query<ClaimedRow>(statement.text, [...statement.values])
    const [{ setting }] = (
      await client.query<{ setting: string }>(`SELECT current_setting('synchronous_commit') AS setting`)
    ).rows as [{ setting: string }]
    await client.query('COMMIT')
    return { rows, synchronousCommit: setting }
  } finally {
    client.release()
  }
}

test('claims commit durably, with or without a settle before them; a drain’s last settle alone does not wait', async () => {
  const job = defineJob({ name: 'durable', input: z.number(), run: () => {} })
  env = await makeSluice({ jobs: [job] })
  await env.sluice.enqueueMany(job, [1, 2, 3])
  const [{ server }] = (await env.sql<{ server: string }>(
    `SELECT current_setting('synchronous_commit') AS server`,
  )) as [{ server: string }]
  const params = {
    queues: ['default'],
    limit: 1,
    leaseMs: 60_000,
    invocationId: 'drn_durable',
    invocationPriority: 0,
    jobsDone: 0,
  }
  const first = await commitsWith(env, claim(env.schema, params))
  expect(first.rows).toHaveLength(1)
  expect(first.synchronousCommit).toBe(server)

  const done = (row: ClaimedRow) => ({
    completions: [{ id: row.id, token: row.token, status: 'completed' as const, durationMs: 1, waitMs: 0 }],
    failures: [],
    handBacks: [],
  })
  const next = await commitsWith(env, settleAndClaim(env.schema, done(first.rows[0]!), params))
  expect(next.rows.filter((row) => row.id !== null)).toHaveLength(1)
  expect(next.synchronousCommit).toBe(server)

  const last = await commitsWith(
    env,
    settle(env.schema, {
      ...done(next.rows[0]!),
      finish: { invocationId: 'drn_durable', queues: ['default'] },
    }),
  )
  expect(last.synchronousCommit).toBe('off')
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.archive`)).toEqual([{ n: 2 }])
})
