/**
 * The operator's view of durable steps: inspect.job's steps and reasons, sluice.result, the admin
 * API's job endpoint, the dashboard's job page and `sluice job <id>`.
 */
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { Browser } from '../dashboard/client.js'
import { runCli } from '../helpers/cli.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, bearer } from '../helpers/http.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const checkout = defineJob({
  name: 'checkout',
  input: z.object({ order: z.number() }),
  run: async (input, ctx) => {
    const total = await ctx.step('price', () => input.order * 10)
    const paid = await ctx.waitForEvent('paid', {
      topic: 'payments.*',
      match: { order: input.order },
      timeout: '1h',
    })
    return { total, paid: paid !== null }
  },
})
const child = defineJob({ name: 'part', queue: 'parts', input: z.object({ n: z.number() }), run: (i) => i.n })
const assembler = defineJob({
  name: 'assemble',
  input: z.object({}),
  run: async (_input, ctx) => {
    const parts = await Promise.all([1, 2, 3].map((n) => ctx.invoke('part', child, { n })))
    return parts
  },
})
const napper = defineJob({
  name: 'napper',
  input: z.object({}),
  run: async (_input, ctx) => {
    await ctx.sleep('nap', '1h')
  },
})
const broken = defineJob({
  name: 'broken',
  input: z.object({}),
  retry: 1,
  run: async (_input, ctx) => {
    await ctx.step('explode', () => {
      throw new Error('kaboom')
    })
  },
})

describe("the operator's view of steps", () => {
  test('inspect.job lists the steps in order, and the reason names the wait', async () => {
    env = await makeSluice({ jobs: [checkout, assembler, child, napper] })
    const c = await env.sluice.enqueue(checkout, { order: 4 })
    const a = await env.sluice.enqueue(assembler, {})
    const n = await env.sluice.enqueue(napper, {})
    await env.sluice.drain({ queues: ['default'] })

    const waiting = await env.sluice.inspect.job(c.id!)
    expect(waiting?.state).toBe('scheduled')
    expect(waiting?.reason).toMatch(/^waiting for event payments\.\* matching \{"order": 4\} until \d{4}-/)
    expect(waiting?.steps).toMatchObject([
      { seq: 0, name: 'price', kind: 'run', state: 'completed', attempts: 1, resultBytes: 2, error: null },
      { seq: 1, name: 'paid', kind: 'event', state: 'waiting', topic: 'payments.*', match: { order: 4 } },
    ])
    expect((await env.sluice.inspect.job(a.id!))?.reason).toBe('waiting for 3 child jobs')
    expect((await env.sluice.inspect.job(n.id!))?.reason).toMatch(/^sleeping until \d{4}-/)
    // The jobs list gives the same reasons.
    const listed = await env.sluice.inspect.jobs({ queue: 'default' })
    expect(listed.find((j) => j.id === a.id)?.reason).toBe('waiting for 3 child jobs')

    expect(await env.sluice.result(c.id!)).toEqual({ state: 'pending', result: null, error: null })
    await env.sluice.publish('payments.card', { order: 4 })
    await env.sluice.drain({ queues: ['default'] })
    expect(await env.sluice.result(c.id!)).toEqual({
      state: 'completed',
      result: { total: 40, paid: true },
      error: null,
    })
    const done = await env.sluice.inspect.job(c.id!)
    expect(done?.result).toEqual({ total: 40, paid: true })
    expect(done?.steps.map((s) => [s.name, s.state])).toEqual([
      ['price', 'completed'],
      ['paid', 'completed'],
    ])
    expect(await env.sluice.result('999999')).toBeNull()
  })

  test("a dead job's result is its error; its failed step shows the error", async () => {
    env = await makeSluice({ jobs: [broken] })
    const { id } = await env.sluice.enqueue(broken, {})
    await env.sluice.drain()
    expect(await env.sluice.result(id!)).toMatchObject({
      state: 'dead',
      result: null,
      error: { message: 'kaboom' },
    })
    expect((await env.sluice.inspect.job(id!))?.steps).toMatchObject([
      { name: 'explode', state: 'failed', attempts: 1, error: { name: 'Error', message: 'kaboom' } },
    ])
  })

  test('the admin API and the dashboard show the steps and the result', async () => {
    env = await makeSluice({ jobs: [checkout] })
    const { id } = await env.sluice.enqueue(checkout, { order: 2 })
    await env.sluice.drain()
    const app = appFor(env, { dashboard: true })
    const res = await app.request(`/api/v1/jobs/${id}`, { headers: bearer() })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { steps: unknown[]; result: unknown; reason: string }
    expect(body.steps).toMatchObject([
      { name: 'price', kind: 'run', state: 'completed' },
      { name: 'paid', kind: 'event', state: 'waiting' },
    ])
    expect(body.result).toBeNull()
    expect(body.reason).toMatch(/^waiting for event/)

    const browser = new Browser(app)
    expect((await browser.login()).status).toBe(303)
    const page = await browser.page(`/dashboard/jobs/${id}`)
    expect(page).toContain('data-step="price" data-step-state="completed"')
    expect(page).toContain('data-step="paid" data-step-state="waiting"')
    expect(page).toMatch(/waiting for event payments\.\* matching/)

    await env.sluice.publish('payments.card', { order: 2 })
    await env.sluice.drain()
    const after = await browser.page(`/dashboard/jobs/${id}`)
    expect(after).toContain('<h2>Result</h2>')
    expect(after).toContain('&quot;total&quot;: 20')
  })

  test('cancel over the admin API takes children=keep, and refuses any other value', async () => {
    env = await makeSluice({ jobs: [assembler, child] })
    const { id } = await env.sluice.enqueue(assembler, {})
    await env.sluice.drain({ queues: ['default'] })
    const app = appFor(env)
    const bad = await app.request(`/api/v1/jobs/${id}/cancel?children=maybe`, {
      method: 'POST',
      headers: bearer(),
    })
    expect(bad.status).toBe(400)
    expect(await env.sql('SELECT count(*)::int AS n FROM $schema.jobs')).toEqual([{ n: 4 }])
    const ok = await app.request(`/api/v1/jobs/${id}/cancel?children=keep`, {
      method: 'POST',
      headers: bearer(),
    })
    expect(ok.status).toBe(200)
    expect(await env.sql('SELECT name FROM $schema.jobs ORDER BY id')).toEqual([
      { name: 'part' },
      { name: 'part' },
      { name: 'part' },
    ])
  })

  test('sluice job <id> shows the steps, then the result', async () => {
    env = await makeSluice({ jobs: [checkout] })
    const { id } = await env.sluice.enqueue(checkout, { order: 5 })
    await env.sluice.drain()
    const config = fileURLToPath(new URL('../cli/fixtures/steps.config.mjs', import.meta.url))
    const cli = (...args: string[]) =>
      runCli(['--config', config, ...args], {
        env: { DATABASE_URL: databaseUrl, SLUICE_SCHEMA: env!.schema },
      })
    const human = await cli('job', id!)
    expect(human.stderr).toBe('')
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(
      /Job \d+ \(checkout on default\): scheduled — waiting for event payments\.\*/,
    )
    expect(human.stdout).toMatch(/1\s+price\s+run\s+completed\s+1/)
    expect(human.stdout).toMatch(/2\s+paid\s+event\s+waiting/)
    await env.sluice.publish('payments.card', { order: 5 })
    await env.sluice.drain()
    const json = await cli('job', id!, '--json')
    expect(json.json<{ job: { result: unknown } }>().job.result).toEqual({ total: 50, paid: true })
    const missing = await cli('job', '987654321')
    expect(missing.code).toBe(1)
    const bad = await cli('job', 'abc')
    expect(bad.code).toBe(2)
  })
})
