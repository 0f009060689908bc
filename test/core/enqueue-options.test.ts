import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, ValidationError } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

const ping = defineJob({ name: 'ping', input: z.number(), run: () => {} })

let env: TestSluice
beforeAll(async () => {
  env = await makeSluice({ jobs: [ping] })
})
afterAll(() => env.cleanup())

describe('enqueue options', () => {
  test('delay and runAt together are a ValidationError naming both; nothing is written', async () => {
    env.statements.reset()
    for (const runAt of ['2027-01-01T00:00:00Z', new Date(Date.now() + 60_000)]) {
      const error = await env.sluice.enqueue(ping, 1, { delay: 5, runAt }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ValidationError)
      expect(error).toMatchObject({ code: 'INVALID_INPUT' })
      expect((error as Error).message).toMatch(/delay.*runAt|runAt.*delay/)
      const many = await env.sluice.enqueueMany(ping, [1, 2], { delay: 0, runAt }).catch((e: unknown) => e)
      expect(many).toBeInstanceOf(ValidationError)
    }
    expect(env.statements.count).toBe(0)
    expect(await env.sql('SELECT 1 FROM $schema.jobs')).toEqual([])
  })

  test('publish refuses a header named __proto__ rather than dropping it; nothing is written', async () => {
    env.statements.reset()
    const headers = JSON.parse('{"tenant": "t", "__proto__": "x"}') as Record<string, string>
    const error = await env.sluice.publish('orders.created', 1, { headers }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as Error).message).toContain('headers.__proto__')
    expect(env.statements.count).toBe(0)
  })

  test('delay alone and runAt alone are accepted', async () => {
    expect((await env.sluice.enqueue(ping, 1, { delay: 5 })).id).not.toBeNull()
    expect((await env.sluice.enqueue(ping, 1, { runAt: new Date(Date.now() + 60_000) })).id).not.toBeNull()
  })
})
