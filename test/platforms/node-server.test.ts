/** The Node.js server recipe (examples/node-server.ts): Sluice's routes under /sluice beside the app's own. */
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { exampleJobs } from '../../examples/jobs.js'
import { exampleServer } from '../../examples/node-server.js'
import { setup } from '../../examples/schema.js'
import { setEnv } from '../helpers/build.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

const SECRET = 'node-server-secret-0123456789'
let env: TestSluice
let restore: () => void
let server: ReturnType<typeof exampleServer>
let base: string

beforeAll(async () => {
  restore = setEnv({ SLUICE_SECRET: SECRET })
  const { welcomeEmail } = exampleJobs(() => env.sluice.db())
  env = await makeSluice({ jobs: [welcomeEmail] })
  await setup(env.sluice)
  server = exampleServer(env.sluice)
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((ok) => server?.close(ok))
  restore?.()
  await env?.cleanup()
})

const post = (path: string, body: unknown, token = SECRET) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

test("enqueue answers 202 and a drain 200 under /sluice; the app's own route is untouched", async () => {
  const enqueued = await post('/sluice/jobs/welcome-email', {
    input: { userId: 'u1', email: 'u1@example.com' },
  })
  expect(enqueued.status).toBe(202)
  const drained = await post('/sluice/drain', { queues: ['emails'] })
  expect(drained.status).toBe(200)
  expect(await drained.json()).toMatchObject({ completed: 1 })
  expect((await post('/sluice/drain', {}, 'wrong-secret-0123456789')).status).toBe(401)
  expect(await (await fetch(`${base}/`)).text()).toBe('your app')
})
