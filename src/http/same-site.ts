import type { Context, MiddlewareHandler } from 'hono'
import * as z from 'zod/mini'
import { assertIdentityEncoding } from './body.js'
import { HttpError } from './errors.js'

/**
 * Refusing requests a web page could make: a page open in a browser can POST to any
 * address (localhost included) with `text/plain`, form or no body at all, and DNS
 * rebinding lets it read answers from a name that resolves to 127.0.0.1. Browsers always
 * send `Origin` on such a POST and the page's own name in `Host`; servers, cron and curl
 * send no `Origin`.
 */

/** `api.example.com`, `api.example.com:8443`, `*.example.com`, `127.0.0.1:3000`, `[::1]:3000`. */
const HOST_PATTERN =
  /^(?:(?:\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i

export const hostListSchema = z.lazy(() =>
  z
    .array(
      z
        .string()
        .check(
          z.regex(
            HOST_PATTERN,
            'must be a host name with an optional port, e.g. "api.example.com" or "localhost:3000"',
          ),
        ),
    )
    .check(z.maxLength(100)),
)

export const originListSchema = z.lazy(() =>
  z
    .array(
      z.string().check(
        z.refine((value) => {
          try {
            const url = new URL(value)
            return /^https?:$/.test(url.protocol) && url.origin === value.toLowerCase().replace(/\/$/, '')
          } catch {
            return false
          }
        }, 'must be an origin such as "https://admin.example.com" (scheme, host and port only)'),
      ),
    )
    .check(z.maxLength(100)),
)

export interface SameSiteOptions {
  /**
   * The names this app answers to (the `Host` header): `api.example.com` (any port),
   * `api.example.com:8443`, `*.example.com` (any subdomain). Default: any host.
   */
  allowedHosts?: readonly string[]
  /** Browser origins allowed to call the app besides its own, e.g. `https://admin.example.com`. Default none. */
  allowedOrigins?: readonly string[]
}

interface HostPort {
  name: string
  port: string | undefined
}

function splitHost(value: string): HostPort | undefined {
  const host = value.trim().toLowerCase()
  const match = /^(\[[^\]]*\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host)
  if (!match) return undefined
  return { name: match[1]!.replace(/\.$/, ''), port: match[2] }
}

function hostMatches(entry: HostPort, host: HostPort): boolean {
  if (entry.port !== undefined && entry.port !== host.port) return false
  if (entry.name.startsWith('*.')) return host.name.endsWith(entry.name.slice(1))
  return entry.name === host.name
}

/** The request's authority as its client addressed it: `Host`, else the URL's. */
function requestHost(c: Context): string {
  return c.req.header('host') ?? new URL(c.req.url).host
}

/** `host[:port]` without the scheme's default port, as an Origin would carry it. */
function authority(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/:(80|443)$/, '')
}

const forbidden = (message: string): HttpError => new HttpError(403, 'FORBIDDEN', message)

/**
 * Refuses, with 403 `FORBIDDEN`, a request whose `Host` is not in `allowedHosts` (when
 * given) and a request with an `Origin` other than the app's own (its `Host`, or the
 * `X-Forwarded-Host` a proxy set) or one of `allowedOrigins`. Requests without `Origin` (servers, cron, curl) pass the Origin check.
 */
export function sameSite(
  options: SameSiteOptions = {},
  /** Where a refused Host is told to look (the dev server has no allowedHosts option). */
  hostAdvice = 'see the allowedHosts option',
): MiddlewareHandler {
  const hosts = options.allowedHosts?.map((entry) => splitHost(entry)!) ?? undefined
  const origins = new Set(options.allowedOrigins?.map((o) => o.toLowerCase().replace(/\/$/, '')))
  return async (c, next) => {
    const host = requestHost(c)
    if (hosts) {
      const parsed = splitHost(host)
      if (!parsed || !hosts.some((entry) => hostMatches(entry, parsed)))
        throw forbidden(`Host "${host.slice(0, 100)}" is not one this app answers to (${hostAdvice}).`)
    }
    const origin = c.req.header('origin')
    if (origin !== undefined && !origins.has(origin.trim().toLowerCase())) {
      // Behind a proxy the app's public name may be in X-Forwarded-Host. A web page cannot
      // set that header on a request the browser sends without asking, so trusting it here
      // opens nothing to other sites.
      const forwarded = c.req.header('x-forwarded-host')?.split(',')[0]
      const names = [host, ...(forwarded ? [forwarded] : [])].map(authority)
      let same = false
      try {
        const url = new URL(origin)
        same = /^https?:$/.test(url.protocol) && names.includes(url.host)
      } catch {}
      if (!same)
        throw forbidden(
          `Requests from origin "${origin.slice(0, 100)}" are refused: only this app's own pages and ` +
            'the origins in allowedOrigins may call it from a browser.',
        )
    }
    await next()
  }
}

function isJson(contentType: string): boolean {
  const essence = contentType.split(';')[0]!.trim().toLowerCase()
  return essence === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(essence)
}

const hasBody = (c: Context): boolean => {
  const length = c.req.header('content-length')
  return (length !== undefined && length.trim() !== '0') || c.req.header('transfer-encoding') !== undefined
}

/**
 * Refuses, with 415 `UNSUPPORTED_MEDIA_TYPE`, a write whose body is not declared JSON:
 * `text/plain`, forms and multipart are what a web page can send without the browser
 * asking first. A request with neither a body nor a `Content-Type` passes (`curl -X POST`).
 * A compressed body (`Content-Encoding` other than identity) is refused the same way.
 */
export const jsonOnly: MiddlewareHandler = async (c, next) => {
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
    const type = c.req.header('content-type')
    if (type === undefined ? hasBody(c) : !isJson(type))
      throw new HttpError(
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        `Send the body as Content-Type: application/json${type === undefined ? '' : ` (got "${type.slice(0, 100)}")`}.`,
      )
    assertIdentityEncoding(c)
  }
  await next()
}
