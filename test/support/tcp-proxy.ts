import { type AddressInfo, connect, createServer, type Socket } from 'node:net'

export interface TcpProxy {
  /** The loopback port clients connect to. */
  port: number
  /** Pairs of sockets relaying now. */
  readonly live: number
  /**
   * Severs every live connection at once, both sides, with a TCP reset where the platform
   * allows: whatever statement is in flight is cut mid-way. Returns how many were cut.
   */
  cut(): number
  close(): Promise<void>
}

/**
 * A TCP relay on loopback: every connection to `port` gets its own connection to `target`,
 * bytes pass through untouched. Used to cut a client's connections mid-statement without
 * touching the server. A client that connects while the target is down is closed at once.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>()
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    client.setNoDelay(true)
    upstream.setNoDelay(true)
    client.pipe(upstream)
    upstream.pipe(client)
    const drop = (): void => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', drop)
    upstream.on('error', drop)
    client.on('close', drop)
    upstream.on('close', drop)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const sever = (): number => {
    const cut = pairs.size
    for (const [client, upstream] of pairs) {
      client.resetAndDestroy()
      upstream.resetAndDestroy()
    }
    pairs.clear()
    return cut
  }
  return {
    port,
    get live() {
      return pairs.size
    },
    cut: sever,
    close: () =>
      new Promise<void>((resolve) => {
        sever()
        server.close(() => resolve())
      }),
  }
}
