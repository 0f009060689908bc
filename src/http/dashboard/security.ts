import type { Context } from 'hono'

/**
 * Scripts and styles only from the dashboard itself (no inline script: the page's data is
 * JSON read by dashboard.js), no framing, forms posting only back to it.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

/** Sets the headers every dashboard response carries; pages (not assets) are never cached. */
export function secureHeaders(c: Context, cacheable: boolean): void {
  const headers = c.res.headers
  headers.set('X-Frame-Options', 'DENY')
  headers.set('Content-Security-Policy', CONTENT_SECURITY_POLICY)
  headers.set('X-Content-Type-Options', 'nosniff')
  headers.set('Referrer-Policy', 'same-origin')
  if (!cacheable) headers.set('Cache-Control', 'no-store')
}

/** Whether the browser reached us over https (directly, or through a proxy that says so). */
export function isHttps(c: Context): boolean {
  const forwarded = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase()
  return forwarded === 'https' || new URL(c.req.url).protocol === 'https:'
}

const ORIGIN = 'http://dashboard.invalid'

/**
 * Where to send the browser after an action or a log-in: a path of the dashboard itself,
 * never another site (`//evil.example` or `/\evil.example` are refused), else the overview.
 * The path is read as the browser will resolve it: dot segments, plain or percent-encoded
 * (`/dashboard/%2e%2e/x`), are resolved before it is compared.
 */
export function sameDashboard(base: string, target: unknown): string {
  if (typeof target !== 'string' || target.length > 2048) return base
  if (!/^[\x21-\x7e]*$/.test(target) || target.includes('\\') || !target.startsWith('/')) return base
  if (target.startsWith('//')) return base
  const url = new URL(target, ORIGIN)
  if (url.origin !== ORIGIN) return base
  const inside = url.pathname === base || url.pathname.startsWith(`${base}/`)
  return inside ? `${url.pathname}${url.search}` : base
}
