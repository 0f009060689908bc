import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { networkInterfaces } from 'node:os'
import type { Duplex } from 'node:stream'
import { Hono } from 'hono'
import { createApp } from '../../http/app.js'
import { notFound } from '../../http/errors.js'
import { sameSite } from '../../http/same-site.js'
import { importOptional } from '../../optional.js'
import type { Sluice } from '../../sluice.js'
import type { AnyCommand, RunContext } from '../command.js'
import { execute } from '../command.js'
import { explain } from '../errors.js'
import { TOKEN_HEADER } from '../remote.js'

export interface DevServerOptions {
  /** The Sluice the routes use (wrapped by `dev` to wake its drain loop and log runs). */
  sluice: Sluice
  context: RunContext
  commands: ReadonlyMap<string, AnyCommand>
  token: string
  /** The Host names it answers to (see devHosts): any other is a DNS-rebinding page. */
  allowedHosts: readonly string[]
  onError(error: unknown): void
}

const bracket = (h: string): string => (h.includes(':') ? `[${h}]` : h)

/**
 * The Host headers the dev server accepts: localhost, 127.0.0.1 and [::1] on its port,
 * plus the address it was told to listen on (every interface's, for 0.0.0.0 or ::).
 */
export function devHosts(host: string, port: number): string[] {
  const names = new Set(['localhost', '127.0.0.1', '::1'])
  if (host === '0.0.0.0' || host === '::') {
    for (const list of Object.values(networkInterfaces()))
      for (const address of list ?? [])
        if (host === '::' || address.family === 'IPv4') names.add(address.address)
  } else {
    names.add(host.replace(/^\[|\]$/g, ''))
  }
  return [...names].flatMap((name) => {
    const shown = bracket(name.replace(/%.*$/, ''))
    return port === 80 ? [`${shown}:80`, shown] : [`${shown}:${port}`]
  })
}

export const newToken = (): string => randomBytes(24).toString('base64url')

function sameToken(given: string | undefined, token: string): boolean {
  if (!given) return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * The dev server: Sluice's HTTP app without authentication, plus the routes through which
 * other `sluice` commands run in this process while it holds the embedded database. Those
 * need the token from .sluice/lock.json (readable by this user only), which a web page
 * cannot send either.
 */
export function devApp(options: DevServerOptions): Hono {
  const root = new Hono()
  root.notFound(notFound)
  // A web page can reach localhost: no foreign Host (DNS rebinding) and no foreign Origin, on any route.
  root.use(
    '*',
    sameSite(
      { allowedHosts: options.allowedHosts },
      'sluice dev answers to localhost, 127.0.0.1 and [::1] on its port, and to the --host address',
    ),
  )
  root.use('/_dev/*', async (c, next) => {
    if (!sameToken(c.req.header(TOKEN_HEADER), options.token)) {
      return c.json({ error: { code: 'UNAUTHORIZED', message: 'Missing or wrong dev token.' } }, 401)
    }
    await next()
  })
  root.get('/_dev/ping', (c) => c.json({ pid: process.pid }))
  root.post('/_dev/cli', async (c) => {
    const body = (await c.req.json().catch(() => ({}))) as { command?: unknown; args?: unknown }
    const command = typeof body.command === 'string' ? options.commands.get(body.command) : undefined
    if (!command) {
      return c.json(
        { error: { code: 'USAGE', message: `Unknown command ${String(body.command)}.`, exitCode: 2 } },
        400,
      )
    }
    try {
      return c.json({ result: await execute(command, options.context, body.args) })
    } catch (error) {
      const explained = explain(error)
      if (explained.exitCode === 1) options.onError(error)
      return c.json(
        { error: explained },
        explained.exitCode === 2 ? 400 : explained.exitCode === 3 ? 503 : 500,
      )
    }
  })
  root.route(
    '/',
    createApp(options.sluice, { auth: false, dashboard: true, onError: (error) => options.onError(error) }),
  )
  return root
}

export interface Listening {
  /** For people: http://localhost:3000 */
  url: string
  /** For this machine's CLI: the address it listens on, e.g. http://127.0.0.1:3000 */
  localUrl: string
  port: number
  close(): Promise<void>
}

/**
 * The Node HTTP server the dev server runs on, an optional peer: only `sluice dev` needs one, so
 * serverless installs need not carry it. `sluice dev` asks for it first, before it opens a database.
 */
export function nodeServer(): Promise<typeof import('@hono/node-server')> {
  return importOptional<typeof import('@hono/node-server')>('@hono/node-server', 'sluice dev')
}

/** How long a client may take to send a request; Node's defaults (300 s for the body) hold a socket for minutes. */
export interface ListenTimeouts {
  /** The whole request, headers and body. */
  requestMs: number
  headersMs: number
  /** How often Node checks them. */
  checkEveryMs: number
}

const LISTEN_TIMEOUTS: ListenTimeouts = { requestMs: 30_000, headersMs: 10_000, checkEveryMs: 5_000 }

/**
 * What Node would answer a request it could not read (a malformed one, or one that did not
 * arrive in time: a body shorter than its Content-Length), as the app's JSON errors read.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy()
    return
  }
  const [status, reason, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [
          408,
          'Request Timeout',
          'The request did not arrive in time (its body was shorter than its Content-Length, or too slow).',
        ]
      : [400, 'Bad Request', 'The request is not valid HTTP.']
  const body = JSON.stringify({ error: { code: 'INVALID_INPUT', message } })
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}

/**
 * Listens on host:port (0 picks a free port) and serves `app`, or the app `app(port)` makes
 * once the port is known. Rejects on EADDRINUSE and the like.
 */
export async function listen(
  app: Hono | ((port: number) => Hono),
  host: string,
  port: number,
  timeouts: Partial<ListenTimeouts> = {},
): Promise<Listening> {
  let served: Hono | undefined = typeof app === 'function' ? undefined : app
  const { createAdaptorServer } = await nodeServer()
  const limits = { ...LISTEN_TIMEOUTS, ...timeouts }
  const server = createAdaptorServer({
    fetch: (request, env) =>
      served ? served.fetch(request, env) : new Response('Starting.', { status: 503 }),
    serverOptions: {
      requestTimeout: limits.requestMs,
      headersTimeout: Math.min(limits.headersMs, limits.requestMs),
      connectionsCheckingInterval: limits.checkEveryMs,
    },
  })
  server.on('clientError', answerClientError)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  if (typeof app === 'function') served = app(address.port)
  const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  const shownHost = ['127.0.0.1', '::1', 'localhost'].includes(local) ? 'localhost' : local
  return {
    url: `http://${bracket(shownHost)}:${address.port}`,
    localUrl: `http://${bracket(local)}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        // Stop accepting; requests in flight finish; idle keep-alive connections are dropped.
        server.close(() => resolve())
        if ('closeIdleConnections' in server) server.closeIdleConnections()
      }),
  }
}
