import { connect } from 'node:net'
import { Hono } from 'hono'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { z } from 'zod'
import { type Listening, listen } from '../../src/cli/dev/server.js'
import { createApp, defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { countJobs, SECRET, testEnv } from '../helpers/http.js'

const greet = defineJob({ name: 'greet', input: z.object({ who: z.string() }), run: () => {} })

let t: TestSluice
let server: Listening
const reported: unknown[] = []
let finished = 0

beforeAll(async () => {
  t = await makeSluice({ jobs: [greet] })
  // Counts the requests the app has answered, hung up or not.
  const counted = new Hono()
  counted.use('*', async (_, next) => {
    try {
      await next()
    } finally {
      finished++
    }
  })
  counted.route('/', createApp(t.sluice, { env: testEnv, onError: (error) => void reported.push(error) }))
  server = await listen(counted, '127.0.0.1', 0)
})
afterAll(async () => {
  await server.close()
  await t.cleanup()
})

/** Sends the headers and part of a body, then hangs up; resolves once the socket is closed. */
function hangUpMidBody(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${SECRET}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"input": {"who": "ha',
      )
      setImmediate(() => socket.destroy())
    })
    socket.on('close', () => resolve())
    socket.on('error', reject)
  })
}

test('a client hanging up mid-body is not reported as a server failure', async () => {
  for (let i = 0; i < 20; i++) await hangUpMidBody(i % 2 ? '/jobs/greet' : '/drain')
  await expect.poll(() => finished, { timeout: 10_000 }).toBe(20)
  // The server still serves.
  const res = await fetch(`${server.localUrl}/jobs/greet`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${SECRET}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ input: { who: 'after' } }),
  })
  expect(res.status).toBe(202)
  expect(await countJobs(t)).toBe(1)
  expect(reported).toEqual([])
})
