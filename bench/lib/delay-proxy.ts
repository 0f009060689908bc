import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { percentile } from './stats.js'

/** What crossed the proxy since the last reset. */
export interface ProxyStats {
  connections: number
  /** Client→server bursts: bytes from the client after the server last spoke (round trips). */
  bursts: number
  /** Query and Sync messages from clients: statements sent, whatever the driver. */
  statements: number
  bytesUp: number
  bytesDown: number
  /** Milliseconds with a request outstanding on a connection, summed over connections. */
  busyMs: number
}

export interface DelayProxy {
  port: number
  rttMs: number
  /** `url` with its host and port pointed at the proxy. */
  via(url: string): string
  /** Counters since the last reset; `reset` starts them over. */
  stats(reset?: boolean): Promise<ProxyStats>
  close(): Promise<void>
}

const CHILD = fileURLToPath(new URL('./delay-proxy-child.ts', import.meta.url))

/**
 * A TCP proxy on loopback, in a child process, that adds `rttMs` of round-trip delay between
 * its clients and the PostgreSQL server `url` names (half each way, timed with hrtime; see
 * delay-proxy-child.ts).
 */
export async function startDelayProxy(url: string, rttMs: number): Promise<DelayProxy> {
  const target = new URL(url)
  const child: ChildProcess = fork(CHILD, [target.hostname, target.port || '5432', String(rttMs)], {
    // The child is TypeScript: it runs under tsx whatever loaded this module (tsx, vitest).
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`delay proxy exited with ${code}`)))
    child.once('message', (m: { type: string; port: number }) => resolve(m.port))
  })
  child.removeAllListeners('exit')
  return {
    port,
    rttMs,
    via(u) {
      const v = new URL(u)
      v.hostname = '127.0.0.1'
      v.port = String(port)
      return v.toString()
    },
    stats: (reset = false) =>
      new Promise<ProxyStats>((resolve) => {
        const onMessage = (m: { type: string; stats: ProxyStats }): void => {
          if (m.type !== 'stats') return
          child.off('message', onMessage)
          resolve(m.stats)
        }
        child.on('message', onMessage)
        child.send({ type: 'stats', reset })
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.disconnect()
      }),
  }
}

export interface MeasuredDelay {
  /** Median `SELECT 1` round trip straight to the server, ms. */
  directMs: number
  /** Median `SELECT 1` round trip through the proxy, ms. */
  proxiedMs: number
  /** The delay the proxy actually added: proxied − direct medians. */
  addedMs: number
  p99AddedMs: number
}

async function selectOnes(url: string, count: number): Promise<number[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    for (let i = 0; i < 5; i++) await client.query('SELECT 1')
    const out: number[] = []
    for (let i = 0; i < count; i++) {
      const t = performance.now()
      await client.query('SELECT 1')
      out.push(performance.now() - t)
    }
    return out
  } finally {
    await client.end()
  }
}

/**
 * The delay a run really had: `SELECT 1` round trips through the proxy against the same
 * straight to the server, medians subtracted (the proxy's counters are reset afterwards).
 */
export async function measureDelay(proxy: DelayProxy, url: string, count = 50): Promise<MeasuredDelay> {
  const direct = await selectOnes(url, count)
  const proxied = await selectOnes(proxy.via(url), count)
  await proxy.stats(true)
  const directMs = percentile(direct, 50)
  const proxiedMs = percentile(proxied, 50)
  return {
    directMs,
    proxiedMs,
    addedMs: proxiedMs - directMs,
    p99AddedMs: percentile(proxied, 99) - directMs,
  }
}
