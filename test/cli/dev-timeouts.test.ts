/**
 * The dev server's Node HTTP server: a request that never finishes arriving (a body shorter
 * than its Content-Length) or that is not HTTP gets a JSON error and its socket back, instead
 * of holding the socket for Node's default five minutes and answering an empty 408.
 */
import { connect } from 'node:net'
import { Hono } from 'hono'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type Listening, listen } from '../../src/cli/dev/server.js'

let server: Listening
beforeAll(async () => {
  const app = new Hono()
  app.post('/echo', async (c) => c.json(await c.req.json()))
  // The handler's read of a body that never came fails when the socket closes: not this test's matter.
  app.onError((_, c) => c.json({ error: { code: 'INVALID_INPUT', message: 'aborted' } }, 400))
  server = await listen(app, '127.0.0.1', 0, { requestMs: 300, headersMs: 300, checkEveryMs: 50 })
})
afterAll(() => server.close())

/** Writes `sent` on a raw socket, keeps it open, and resolves with all the server answers before it closes the socket. */
function rawExchange(sent: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => socket.write(sent))
    let answer = ''
    socket.on('data', (chunk) => {
      answer += chunk.toString()
    })
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

test('a body shorter than its Content-Length gets a JSON 408 once the request time is up', async () => {
  const answer = await rawExchange(
    'POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"input":',
  )
  expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/)
  expect(answer).toContain('Content-Type: application/json')
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
  expect(body).toEqual({
    error: { code: 'INVALID_INPUT', message: expect.stringContaining('Content-Length') },
  })
})

test('a request that is not HTTP gets a JSON 400', async () => {
  const answer = await rawExchange('HELLO THERE\r\n\r\n')
  expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
  expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code).toBe('INVALID_INPUT')
})

test('a whole request is answered as before', async () => {
  const res = await fetch(`http://127.0.0.1:${server.port}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"a":1}',
  })
  expect(await res.json()).toEqual({ a: 1 })
})
