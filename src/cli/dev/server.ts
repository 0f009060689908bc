import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import { Hono } from 'hono'
import { createApp } from '../../http/app.js'
import { notFound } from '../../http/errors.js'
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
  onError(error: unknown): void
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
  root.route('/', createApp(options.sluice, { auth: false, onError: (error) => options.onError(error) }))
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

/** Listens on host:port (0 picks a free port). Rejects on EADDRINUSE and the like. */
export async function listen(app: Hono, host: string, port: number): Promise<Listening> {
  const server = createAdaptorServer({ fetch: app.fetch })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  const shownHost = ['127.0.0.1', '::1', 'localhost'].includes(local) ? 'localhost' : local
  const bracket = (h: string): string => (h.includes(':') ? `[${h}]` : h)
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
