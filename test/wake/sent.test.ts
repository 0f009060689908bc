/**
 * A Lambda handler returns once each wake-up it started has left: Node's fetch reports each
 * request it has written, and that report must mark the wake-up that request carries, not
 * another wake-up to the same drain URL. Fetch is wrapped so that a wake-up's request can be
 * held back; everything else goes over real connections to a local stand-in drain.
 */
import { channel } from 'node:diagnostics_channel'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, expect, test, vi } from 'vitest'
import type { Sluice } from '../../src/index.js'
import { maintainHandler } from '../../src/platforms/aws-lambda.js'
import { pendingWakeups, trackWakeup, wakeupMark } from '../../src/wake/pending.js'
import { WAKE_DEFAULTS, type WakeOptions, wakeSoon } from '../../src/wake/send.js'
import { scheduledEvent } from '../helpers/lambda.js'

const SECRET = 'wake-sent-secret-0123456789'
const realFetch = globalThis.fetch

let server: Server
/** The queue of each request the drain received, in arrival order. */
let received: string[]
let url: string
/** Lets the held-back wake-up's request go. */
let release: () => void

beforeEach(async () => {
  received = []
  server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      received.push(JSON.parse(body).queues[0])
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"claimed":0}')
    })
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/drain`
  const held = new Promise<void>((ok) => {
    release = ok
  })
  // The wake-up of queue `held` leaves only when the test says so, as if its connection were slow.
  vi.stubGlobal('fetch', async (input: string | URL | Request, init?: RequestInit) => {
    if (JSON.parse(String(init?.body)).queues[0] === 'held') await held
    return realFetch(input, init)
  })
})
afterEach(async () => {
  release()
  vi.unstubAllGlobals()
  server.closeAllConnections()
  await new Promise((ok) => server.close(ok))
})

const wakeOptions = (): WakeOptions => ({
  ...WAKE_DEFAULTS,
  url,
  secret: SECRET,
  onEnqueue: true,
  timeoutMs: 60_000,
  waitUntil: undefined,
})

/** A Lambda handler whose work is `work`; the bound on its wait is far above the test's timeout. */
function lambda(work: () => Promise<void>) {
  const sluice = {
    maintain: async () => {
      await work()
      return { ranAt: new Date().toISOString(), tasks: [] }
    },
  } as unknown as Sluice
  const handler = maintainHandler(sluice, { wakeWaitMs: 60_000 })
  let returned = false
  const invocation = handler(scheduledEvent()).then(() => {
    returned = true
  })
  return { invocation, returned: () => returned }
}

/** Lets every callback already due run: whatever the handler would do now, it has done. */
const settled = () => new Promise((ok) => setImmediate(ok))

test('a wake-up sent and answered before an earlier one has left does not count for it', async () => {
  const mark = wakeupMark()
  const { invocation, returned } = lambda(async () => {
    wakeSoon(wakeOptions(), 'held')
    wakeSoon(wakeOptions(), 'other')
  })
  // The later wake-up is written and answered: only the held one is still in flight.
  await vi.waitFor(() => expect(received).toEqual(['other']))
  await vi.waitFor(() => expect(pendingWakeups(mark)).toBe(1))
  await settled()
  expect(returned(), 'returned with a wake-up that had not left').toBe(false)
  release()
  await invocation
  await vi.waitFor(() => expect(received).toEqual(['other', 'held']))
}, 20_000)

test('a request to the drain URL that is no wake-up does not count as one', async () => {
  let answered = false
  const { invocation, returned } = lambda(async () => {
    wakeSoon(wakeOptions(), 'held')
    // The app's own call to the same URL, e.g. a drain it runs by hand.
    const response = await fetch(url, { method: 'POST', body: JSON.stringify({ queues: ['mine'] }) })
    await response.text()
    answered = true
  })
  await vi.waitFor(() => expect(answered).toBe(true))
  await settled()
  expect(returned(), 'returned with a wake-up that had not left').toBe(false)
  release()
  await invocation
  await vi.waitFor(() => expect(received).toEqual(['mine', 'held']))
}, 20_000)

test('a written request is told by the wake-up id in its headers, in each form undici reports them', async () => {
  const forms = [
    // undici 7 (Node 24's fetch): [name, value, …]
    (id: string) => ['content-type', 'application/json', 'sluice-wake-id', id],
    // Node 20's fetch: the raw header lines
    (id: string) => `content-type: application/json\r\nSluice-Wake-Id: ${id}\r\n`,
  ]
  for (const headers of forms) {
    const id = crypto.randomUUID()
    const mark = wakeupMark()
    let answer = () => {}
    const answered = new Promise<void>((ok) => {
      answer = ok
    })
    const { invocation, returned } = lambda(async () => {
      void trackWakeup(id, answered)
    })
    await vi.waitFor(() => expect(pendingWakeups(mark)).toBe(1))
    await settled()
    expect(returned()).toBe(false)
    // What undici publishes once it has written a request (a request to elsewhere carrying the id).
    channel('undici:request:bodySent').publish({
      request: { origin: 'http://127.0.0.1:1', path: '/elsewhere', method: 'POST', headers: headers(id) },
    })
    await settled()
    expect(returned(), String(headers(id))).toBe(true)
    await invocation
    answer()
  }
})
