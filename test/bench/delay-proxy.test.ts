import pg from 'pg'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type DelayProxy, startDelayProxy } from '../../bench/lib/delay-proxy.js'
import { messageReader } from '../../bench/lib/pg-messages.js'
import { databaseUrl } from '../helpers/db.js'

/** A typed protocol message: type byte, int32 length (itself included), body. */
const message = (type: string, body: Buffer): Buffer => {
  const head = Buffer.alloc(5)
  head.write(type, 0, 'latin1')
  head.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([head, body])
}

const startup = (): Buffer => {
  const body = Buffer.from('\0\x03\0\0user\0postgres\0\0', 'latin1')
  const head = Buffer.alloc(4)
  head.writeInt32BE(body.length + 4, 0)
  return Buffer.concat([head, body])
}

const stream = Buffer.concat([
  startup(),
  message('Q', Buffer.from('SELECT 1\0')),
  message('P', Buffer.from('\0SELECT $1\0\0\0')),
  message('B', Buffer.alloc(12)),
  message('E', Buffer.alloc(5)),
  message('S', Buffer.alloc(0)),
  message('X', Buffer.alloc(0)),
])

test.each([
  ['whole', stream.length],
  ['in chunks of 1 byte', 1],
  ['in chunks of 3 bytes', 3],
  ['in chunks of 7 bytes', 7],
])('a client stream read %s gives each typed message once, after the startup message', (_, size) => {
  const types: string[] = []
  const read = messageReader(1, (type) => types.push(String.fromCharCode(type)))
  for (let i = 0; i < stream.length; i += size) read(stream.subarray(i, i + size))
  expect(types).toEqual(['Q', 'P', 'B', 'E', 'S', 'X'])
})

let proxy: DelayProxy
beforeAll(async () => {
  proxy = await startDelayProxy(databaseUrl, 0)
})
afterAll(async () => {
  await proxy?.close()
})

test('the proxy counts one round trip and one statement per query, and the time they were outstanding', async () => {
  const client = new pg.Client({ connectionString: proxy.via(databaseUrl) })
  await client.connect()
  try {
    await proxy.stats(true)
    await client.query('SELECT 1')
    await client.query('SELECT $1::int AS n', [2])
    await client.query('BEGIN; SELECT 3; COMMIT')
    const stats = await proxy.stats(true)
    expect(stats).toMatchObject({ bursts: 3, statements: 3 })
    expect(stats.busyMs).toBeGreaterThan(0)
    expect(stats.bytesUp).toBeGreaterThan(0)
    expect(stats.bytesDown).toBeGreaterThan(0)
  } finally {
    await client.end()
  }
})
