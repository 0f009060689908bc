import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { Client, type NeonConfig, Pool, type PoolConfig } from '@neondatabase/serverless'
import { type RawData, WebSocket, WebSocketServer } from 'ws'

export interface WsProxy {
  port: number
  close(): Promise<void>
}

function toBuffer(data: RawData): Buffer {
  if (Array.isArray(data)) return Buffer.concat(data)
  return data instanceof ArrayBuffer ? Buffer.from(data) : data
}

/**
 * A WebSocket→TCP proxy in the spirit of Neon's wsproxy: every WebSocket
 * connection gets its own TCP connection to `target`, and bytes are relayed
 * both ways as binary frames. The `?address=` query the driver appends is
 * ignored; all connections go to `target`.
 */
export async function startWsProxy(target: { host: string; port: number }): Promise<WsProxy> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })

  server.on('connection', (ws) => {
    const socket = connect(target.port, target.host)
    socket.setNoDelay(true)
    socket.on('data', (chunk) => ws.send(chunk, { binary: true }))
    socket.on('error', () => ws.terminate())
    socket.on('close', () => ws.close())
    ws.on('message', (data) => socket.write(toBuffer(data)))
    ws.on('error', () => socket.destroy())
    ws.on('close', () => socket.end())
  })

  const { port } = server.address() as AddressInfo
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const client of server.clients) client.terminate()
        server.close((err) => (err ? reject(err) : resolve()))
      }),
  }
}

/** The driver options that make a WebSocket connection a plain `ws://` hop to the proxy on `proxyPort`. */
export function localSocketOptions(proxyPort: number) {
  return {
    webSocketConstructor: WebSocket,
    wsProxy: `127.0.0.1:${proxyPort}/v1`,
    useSecureWebSocket: false,
    forceDisablePgSSL: true,
    pipelineConnect: false,
    pipelineTLS: false,
  } satisfies Partial<NeonConfig>
}

type SocketConfigTarget = Pick<NeonConfig, keyof ReturnType<typeof localSocketOptions>>

/**
 * Points the driver's WebSocket path at the proxy. Pass the exported
 * `neonConfig` class to change the global defaults, or `client.neonConfig`
 * to change one client only.
 */
export function configureNeonForLocal(config: SocketConfigTarget, proxyPort: number): void {
  Object.assign(config, localSocketOptions(proxyPort))
}

/** A driver `Pool` whose clients use the proxy, leaving the global `neonConfig` untouched. */
export function localNeonPool(config: PoolConfig, proxyPort: number): Pool {
  const pool = new Pool(config)
  // The driver's Pool replaces a `Client` passed in its options, and its bundled
  // pg takes `stream` as one shared socket rather than a factory, so the client
  // class is swapped after construction; pg-pool reads it for each new client.
  pool.Client = class LocalClient extends Client {
    constructor(clientConfig?: ConstructorParameters<typeof Client>[0]) {
      super(clientConfig)
      configureNeonForLocal(this.neonConfig, proxyPort)
    }
  }
  return pool
}
