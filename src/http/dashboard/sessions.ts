/**
 * The dashboard's log-in state in the database, so that every instance sees the same: the
 * throttle on repeated attempts per client, and the sessions a logout ended.
 */
import type { Context } from 'hono'
import { quoteSchema } from '../../names.js'
import type { Sluice } from '../../sluice.js'
import {
  endSession,
  type LoginGateRow,
  type LoginThrottle,
  loginSucceeded,
  sessionEnded,
  takeLoginAttempt,
} from '../../sql/dashboard.js'

/** Where platforms put the client's address, in the order trusted. */
const CLIENT_HEADERS = ['cf-connecting-ip', 'x-real-ip', 'x-vercel-forwarded-for', 'x-forwarded-for']

/**
 * The client a log-in attempt comes from: the platform's header, else the connection's peer (on
 * Node), else one bucket shared by all.
 */
export function clientOf(c: Context, option: ((c: Context) => string | undefined) | undefined): string {
  const chosen = option?.(c)
  if (typeof chosen === 'string' && chosen !== '') return chosen.slice(0, 200)
  for (const name of CLIENT_HEADERS) {
    const value = c.req.header(name)?.split(',')[0]?.trim()
    if (value) return `ip:${value.slice(0, 100)}`
  }
  // Node's server (@hono/node-server) passes the connection: its peer address.
  const peer = (c.env as { incoming?: { socket?: { remoteAddress?: unknown } } } | undefined)?.incoming
    ?.socket?.remoteAddress
  if (typeof peer === 'string' && peer !== '') return `ip:${peer.slice(0, 100)}`
  return 'global'
}

export interface SessionStore {
  /** Takes an attempt for `client`: admitted, or how long it must still wait. */
  attempt(client: string): Promise<LoginGateRow>
  succeeded(client: string): Promise<void>
  end(id: string, expiresAt: Date): Promise<void>
  ended(id: string): Promise<boolean>
}

export function sessionStore(sluice: Sluice, throttle: LoginThrottle): SessionStore {
  const t = quoteSchema(sluice.config.schema)
  return {
    async attempt(client) {
      const { rows } = await (await sluice.db()).query<LoginGateRow>(takeLoginAttempt(t, client, throttle))
      return rows[0]!
    },
    async succeeded(client) {
      await (await sluice.db()).query(loginSucceeded(t, client))
    },
    async end(id, expiresAt) {
      await (await sluice.db()).query(endSession(t, id, expiresAt))
    },
    async ended(id) {
      const { rows } = await (await sluice.db()).query<{ ended: boolean }>(sessionEnded(t, id))
      return rows[0]?.ended ?? false
    },
  }
}
