import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { render } from '../../scripts/gen-assets.js'
import { ASSETS } from '../../src/http/dashboard/assets.generated.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, SECRET } from '../helpers/http.js'
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

  test("served by a host that strips its prefix (Express's app.use), mountedAt puts it back", async () => {
    const { Hono } = await import('hono')
    const inner = appFor(t, { dashboard: { mountedAt: '/sluice' } })
    // What Express does for app.use('/sluice', listener): the app sees the path without the prefix.
    const host = new Hono().all('/sluice/*', (c) => {
      const url = new URL(c.req.url)
      url.pathname = url.pathname.slice('/sluice'.length)
      return inner.fetch(new Request(url, c.req.raw))
    })
    const browser = new Browser(host)
    const away = await browser.get('/sluice/dashboard/jobs?queue=a')
    expect(away.status).toBe(303)
    expect(away.headers.get('location')).toBe(
      `/sluice/dashboard/login?next=${encodeURIComponent('/sluice/dashboard/jobs?queue=a')}`,
    )
    const login = await browser.post('/sluice/dashboard/login', {
      secret: SECRET,
      next: '/sluice/dashboard/jobs?queue=a',
    })
    expect(login.status).toBe(303)
    expect(login.headers.get('location')).toBe('/sluice/dashboard/jobs?queue=a')
    expect(login.headers.getSetCookie()[0]).toContain('Path=/sluice/dashboard')
    const page = await browser.page('/sluice/dashboard/jobs')
    expect(page).toContain('href="/sluice/dashboard/queues"')
    expect(page).toContain('src="/sluice/dashboard/assets/dashboard.')
    const css = /href="(\/sluice\/dashboard\/assets\/dashboard\.[0-9a-f]+\.css)"/.exec(page)?.[1]
    expect((await browser.get(css!)).status).toBe(200)
    expect((await browser.get('/sluice/dashboard/')).status).toBe(200)
  })
})
