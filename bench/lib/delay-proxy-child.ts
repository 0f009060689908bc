/**
 * The delay proxy's own process (see delay-proxy.ts): a TCP relay on loopback that holds every
 * chunk for half the round-trip delay in each direction and counts what crosses it. It runs
 * apart from the benchmark so that its timing loop neither burns the measured process's CPU
 * nor waits behind the measured systems' work on one event loop.
 *
 * Timing: each direction of each connection is a FIFO of chunks stamped with their release
 * time (hrtime ns). One pump releases every due chunk; while chunks are pending it sleeps on
 * a timer until about 2 ms before the next release (Node timers cannot wait less than 1 ms),
 * then in futex waits of at most 0.2 ms with a turn of the event loop (setImmediate) between
 * them, until the release time has passed. Nothing runs while nothing is pending.
 *
 * Counting, per connection: a burst is client→server bytes arriving after the server last
 * spoke (a round trip); statements are the client's Query ('Q') and Sync ('S') messages; a
 * request is outstanding from the moment the client's bytes reach the proxy until the
 * server's ReadyForQuery ('Z') answering it is released to the client.
 */
import { connect, createServer, type Socket } from 'node:net'
import { messageReader } from './pg-messages.js'

interface Pending {
  at: bigint
  chunk: Buffer
}

interface Lane {
  queue: Pending[]
  to: Socket
  /** Called as each chunk is written out (the server→client lane ends requests here). */
  onRelease?: (chunk: Buffer, at: bigint) => void
}

interface Counters {
  connections: number
  bursts: number
  statements: number
  bytesUp: number
  bytesDown: number
  /** Nanoseconds with at least one request outstanding, summed over connections. */
  busyNs: bigint
}

const zero = (): Counters => ({
  connections: 0,
  bursts: 0,
  statements: 0,
  bytesUp: 0,
  bytesDown: 0,
  busyNs: 0n,
})

let halfNs = 0n
let counters = zero()
const lanes = new Set<Lane>()
let pumping = false
const SLICE_MS = 0.2
const slice = new Int32Array(new SharedArrayBuffer(4))

const now = (): bigint => process.hrtime.bigint()

function release(): bigint | undefined {
  const t = now()
  let next: bigint | undefined
  for (const lane of lanes) {
    while (lane.queue.length > 0 && lane.queue[0]!.at <= t) {
      const { chunk } = lane.queue.shift()!
      if (!lane.to.destroyed) lane.to.write(chunk)
      lane.onRelease?.(chunk, t)
    }
    const head = lane.queue[0]
    if (head && (next === undefined || head.at < next)) next = head.at
  }
  return next
}

function pump(): void {
  const next = release()
  if (next === undefined) {
    pumping = false
    return
  }
  const waitMs = Number(next - now()) / 1e6
  // A timer fires 1 ms late or more on a busy machine: it only covers what lies beyond 3 ms.
  if (waitMs > 3) {
    setTimeout(pump, Math.floor(waitMs - 2))
    return
  }
  // Closer in, sleep in slices of at most 0.2 ms (a futex wait, precise to microseconds and
  // free of CPU) and look at the sockets between slices, so that a chunk arriving meanwhile is
  // stamped at most one slice late and the proxy does not take a core from the systems measured.
  if (waitMs > 0.02) Atomics.wait(slice, 0, 0, Math.min(waitMs, SLICE_MS))
  setImmediate(pump)
}

function enqueue(lane: Lane, chunk: Buffer): void {
  if (halfNs === 0n) {
    if (!lane.to.destroyed) lane.to.write(chunk)
    lane.onRelease?.(chunk, now())
    return
  }
  lane.queue.push({ at: now() + halfNs, chunk })
  if (!pumping) {
    pumping = true
    setImmediate(pump)
  }
}

const Q = 0x51
const S = 0x53
const Z = 0x5a

function relay(client: Socket, target: { host: string; port: number }): void {
  const upstream = connect(target.port, target.host)
  client.setNoDelay(true)
  upstream.setNoDelay(true)
  counters.connections++
  let serverSpokeLast = true
  /** Requests awaiting their ReadyForQuery; the startup message is answered by one too. */
  let outstanding = 0
  let busySince = 0n
  let arrived = 0n
  const readUp = messageReader(1, (type) => {
    if (type === Q || type === S) {
      counters.statements++
      if (outstanding++ === 0) busySince = arrived
    }
  })
  const up: Lane = { queue: [], to: upstream }
  const down: Lane = { queue: [], to: client }
  let releasedAt = 0n
  const readDown = messageReader(0, (type) => {
    if (type === Z && outstanding > 0 && --outstanding === 0) counters.busyNs += releasedAt - busySince
  })
  down.onRelease = (chunk, at) => {
    releasedAt = at
    readDown(chunk)
  }
  let started = false
  client.on('data', (chunk: Buffer) => {
    arrived = now()
    counters.bytesUp += chunk.length
    if (serverSpokeLast) counters.bursts++
    serverSpokeLast = false
    if (!started) {
      // The startup message: outstanding until the server's first ReadyForQuery.
      started = true
      if (outstanding++ === 0) busySince = arrived
    }
    readUp(chunk)
    enqueue(up, chunk)
  })
  upstream.on('data', (chunk: Buffer) => {
    counters.bytesDown += chunk.length
    serverSpokeLast = true
    enqueue(down, chunk)
  })
  lanes.add(up)
  lanes.add(down)
  const drop = (): void => {
    lanes.delete(up)
    lanes.delete(down)
    client.destroy()
    upstream.destroy()
  }
  for (const s of [client, upstream]) {
    s.on('error', drop)
    s.on('close', drop)
  }
}

type Command = { type: 'stats'; reset: boolean } | { type: 'delay'; rttMs: number }

const target = { host: process.argv[2] ?? '127.0.0.1', port: Number(process.argv[3] ?? 5432) }
halfNs = BigInt(Math.round((Number(process.argv[4] ?? 0) * 1e6) / 2))
const server = createServer((client) => relay(client, target))
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.send?.({ type: 'ready', port: typeof address === 'object' && address ? address.port : 0 })
})
process.on('message', (command: Command) => {
  if (command.type === 'delay') halfNs = BigInt(Math.round((command.rttMs * 1e6) / 2))
  if (command.type === 'stats') {
    const c = counters
    process.send?.({ type: 'stats', stats: { ...c, busyMs: Number(c.busyNs) / 1e6, busyNs: undefined } })
    if (command.reset) counters = zero()
  }
})
process.on('disconnect', () => process.exit(0))
