/**
 * A process that serves its own drain URL (`next start`, a Node server, or a test): the drain
 * request a wake-up makes lands in the process whose enqueue is still waiting for that wake-up to
 * leave. Each handler waits only for the wake-ups it started itself; before, the drain held its
 * answer for the very wake-up that called it, and each waited out the other's bound.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, test } from 'vitest'
import * as z from 'zod'
import { createSluice, defineJob, type Sluice } from '../../src/index.js'
import { vercelDrain, vercelHandlers } from '../../src/platforms/vercel.js'
import { seeWakeupsOut } from '../../src/platforms/wait-until.js'
import { trackWakeup, wakeupMark } from '../../src/wake/pending.js'
import { databaseUrl, pgPool, uniqueSchema } from '../helpers/db.js'

const SECRET = 'own-drain-url-secret-0123456789'
const schema = uniqueSchema('owndrain')
const ran: number[] = []
const ping = defineJob({
  name: 'ping',
  input: z.object({ n: z.number() }),
  run: ({ n }) => {
    ran.push(n)
  },
})

let server: Server
let sluice: Sluice
let enqueue: (request: Request) => Response | Promise<Response>

beforeAll(async () => {
  server = createServer()
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/drain`
  sluice = createSluice({
    database: databaseUrl,
    schema,
    jobs: [ping],
    wake: { url, secret: SECRET, timeoutMs: 60_000 },
  })
  await sluice.migrate()
  // Outside Vercel there is no waitUntil: each answer waits for its wake-ups, here for up to a
  // minute, far above the test's timeout, so a handler that waits for another's wake-up hangs.
  const options = { env: { SLUICE_SECRET: SECRET }, wakeWaitMs: 60_000 }
  const drain = vercelDrain(sluice, options)
  enqueue = vercelHandlers(sluice, options).POST
  // The drain URL is served by this very process, as `next start` serves its routes.
  server.on('request', (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      const headers = Object.entries(req.headers).map(([k, v]) => [k, String(v)] as [string, string])
      const request = new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers,
        body: Buffer.concat(chunks),
      })
      const response = await drain.POST(request)
      res.writeHead(response.status, { 'content-type': 'application/json' }).end(await response.text())
    })
  })
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((ok) => server.close(ok))
  await sluice.close()
  const admin = pgPool(1)
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

test('an enqueue whose wake-up reaches this same process answers, and the drain it woke runs the job', async () => {
  const response = await enqueue(
    new Request('http://127.0.0.1/api/jobs/ping', {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { n: 1 } }),
    }),
  )
  expect(response.status, await response.text()).toBe(202)
  await expect.poll(() => ran, { timeout: 15_000 }).toEqual([1])
}, 30_000)

test("seeWakeupsOut with a mark waits for the wake-ups started after it, not another request's", async () => {
  const mark = wakeupMark()
  // Another request's wake-up, in flight for good.
  const forever = new Promise<never>(() => {})
  void trackWakeup(crypto.randomUUID(), forever)
  // Started before this request's mark: not waited for (the bound is far above the test's timeout).
  await seeWakeupsOut(undefined, 60_000, mark + 1)
}, 10_000)
