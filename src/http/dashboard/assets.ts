/**
 * The dashboard's scripts and styles, embedded at build time (assets.generated.ts) and served
 * under content-hashed names, so a browser may keep them for a year: a new version is a new name.
 */
import type { Context } from 'hono'
import { ASSETS } from './assets.generated.js'

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
}

/** `uplot.js` → `<base>/assets/uplot.<hash>.js`. */
export function assetUrl(base: string, name: string): string {
  const asset = ASSETS[name]
  if (!asset) throw new Error(`No dashboard asset ${name}`)
  const dot = name.lastIndexOf('.')
  return `${base}/assets/${name.slice(0, dot)}.${asset.hash}${name.slice(dot)}`
}

/** Serves `/assets/<name>.<hash>.<ext>`; an unknown name or an old hash is a 404. */
export function serveAsset(c: Context): Response {
  const match = /^([a-z]+)\.([0-9a-f]{12})\.(js|css)$/.exec(c.req.param('file') ?? '')
  const asset = match ? ASSETS[`${match[1]}.${match[3]}`] : undefined
  if (!match || !asset || asset.hash !== match[2]) return c.text('No such asset.', 404)
  return c.body(asset.body, 200, {
    'Content-Type': TYPES[match[3]!]!,
    'Cache-Control': 'public, max-age=31536000, immutable',
    'X-Content-Type-Options': 'nosniff',
  })
}
