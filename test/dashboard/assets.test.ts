import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { render } from '../../scripts/gen-assets.js'
import { ASSETS } from '../../src/http/dashboard/assets.generated.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor } from '../helpers/http.js'
import { Browser } from './client.js'
import { JOBS } from './fixture.js'

describe('dashboard assets', () => {
  let t: TestSluice

  beforeAll(async () => {
    t = await makeSluice({ jobs: JOBS })
  })
  afterAll(() => t.cleanup())

  test('the generated module matches its sources (run `npm run gen` after editing them)', async () => {
    const committed = await readFile(
      new URL('../../src/http/dashboard/assets.generated.ts', import.meta.url),
      'utf8',
    )
    expect(committed).toBe(await render())
  })

  test('uPlot is embedded whole', () => {
    expect(ASSETS['uplot.js']?.body.length).toBeGreaterThan(40_000)
    expect(ASSETS['uplot.js']?.body).toContain('uPlot')
  })

  test('every asset a page links is served with its type, for a year, without a session', async () => {
    const app = appFor(t, { dashboard: true })
    const browser = new Browser(app)
    await browser.login()
    const page = await browser.page('/dashboard/insights')
    const links = [...page.matchAll(/(?:href|src)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]!)
    expect(links).toHaveLength(4)
    for (const link of links) {
      const res = await app.request(link)
      expect(res.status, link).toBe(200)
      expect(res.headers.get('content-type'), link).toBe(
        link.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
      )
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      const name = link.replace(/^.*\/([a-z]+)\.[0-9a-f]{12}\.(js|css)$/, '$1.$2')
      expect(await res.text()).toBe(ASSETS[name]!.body)
    }
  })

  test('an unknown asset, or a known one under an old hash, is a 404', async () => {
    const app = appFor(t, { dashboard: true })
    expect((await app.request('/dashboard/assets/dashboard.000000000000.js')).status).toBe(404)
    expect((await app.request('/dashboard/assets/nope.js')).status).toBe(404)
  })

  test('mounted under a prefix (as on Vercel), links and cookies carry it', async () => {
    const { Hono } = await import('hono')
    const outer = new Hono().route('/api', appFor(t, { dashboard: true }))
    const browser = new Browser(outer)
    const res = await browser.login(undefined, '/api/dashboard')
    expect(res.headers.getSetCookie()[0]).toContain('Path=/api/dashboard')
    const page = await browser.page('/api/dashboard/jobs')
    expect(page).toContain('href="/api/dashboard/queues"')
    expect(page).toContain('src="/api/dashboard/assets/dashboard.')
  })
})
