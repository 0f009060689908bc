import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createApp } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, NEXT_SECRET } from '../helpers/http.js'
import { Browser } from './client.js'
import { JOBS } from './fixture.js'

describe('dashboard authentication', () => {
  let t: TestSluice
  let app: Hono

  beforeAll(async () => {
    t = await makeSluice({ jobs: JOBS })
    app = appFor(t, { dashboard: true })
  })
  afterAll(() => t.cleanup())

  test('is off unless asked for', async () => {
    expect((await appFor(t).request('/dashboard')).status).toBe(404)
  })

  test('without a session every page sends the browser to the log-in form and shows no data', async () => {
    const browser = new Browser(app)
    for (const path of ['/dashboard', '/dashboard/jobs', '/dashboard/queues?x=1']) {
      const res = await browser.get(path)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/dashboard/login?next=${encodeURIComponent(path)}`)
    }
    const login = await browser.page('/dashboard/login')
    expect(login).toContain('name="secret"')
    expect(login).not.toContain('data-queue')
    expect((await browser.post('/dashboard/queues/default/pause', {})).status).toBe(401)
  })

  test('a wrong secret is refused and sets no cookie', async () => {
    const browser = new Browser(app)
    const res = await browser.login('sk_wrong_000000000000000000')
    expect(res.status).toBe(401)
    expect(res.headers.getSetCookie()).toEqual([])
    expect(await res.text()).toContain('data-flash')
    expect((await browser.get('/dashboard/jobs')).status).toBe(303)
  })

  test('the right secret (either while rotating) sets an HttpOnly, SameSite=Strict session cookie scoped to the dashboard for 12 h', async () => {
    for (const secret of [undefined, NEXT_SECRET]) {
      const browser = new Browser(app)
      const res = await browser.login(secret)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/dashboard')
      const [cookie] = res.headers.getSetCookie()
      expect(cookie).toMatch(/^sluice_session=[0-9]+\.[0-9a-f]{32}\.[0-9a-f]{64};/)
      expect(cookie).toContain('HttpOnly')
      expect(cookie).toContain('SameSite=Strict')
      expect(cookie).toContain('Path=/dashboard')
      expect(cookie).toContain('Max-Age=43200')
      expect(cookie).not.toContain('Secure')
      expect((await browser.get('/dashboard/jobs')).status).toBe(200)
    }
  })

  test('over https the cookie is Secure; after log-in the browser goes back to the page it asked for', async () => {
    const browser = new Browser(app, 'https://ops.example.com')
    const res = await browser.post('/dashboard/login', {
      secret: 'sk_current_2f6b1c8e9a0d4e7f',
      next: '/dashboard/queues',
    })
    expect(res.headers.getSetCookie()[0]).toContain('Secure')
    expect(res.headers.get('location')).toBe('/dashboard/queues')
    // Never to another site.
    const elsewhere = await new Browser(app).post('/dashboard/login', {
      secret: 'sk_current_2f6b1c8e9a0d4e7f',
      next: '//evil.example/dashboard',
    })
    expect(elsewhere.headers.get('location')).toBe('/dashboard')
  })

  test('a tampered or foreign session cookie is no session', async () => {
    const browser = new Browser(app)
    await browser.login()
    const token = browser.cookies.get('sluice_session')!
    const [expires, nonce, mac] = token.split('.')
    browser.cookies.set('sluice_session', `${Number(expires) + 1000}.${nonce}.${mac}`)
    expect((await browser.get('/dashboard/jobs')).status).toBe(303)
    // Signed with another app's secret.
    const other = createApp(t.sluice, {
      env: { SLUICE_SECRET: 'sk_other_app_9f8e7d6c5b4a3210' },
      dashboard: true,
      onError: () => {},
    })
    const foreign = new Browser(other)
    await foreign.login('sk_other_app_9f8e7d6c5b4a3210')
    browser.cookies.set('sluice_session', foreign.cookies.get('sluice_session')!)
    expect((await browser.get('/dashboard/jobs')).status).toBe(303)
  })

  test('log-out (with its CSRF token) ends the session', async () => {
    const browser = new Browser(app)
    await browser.login()
    const page = await browser.page('/dashboard/jobs')
    const csrf = /name="_csrf" value="([0-9a-f]{64})"/.exec(page)![1]!
    const res = await browser.post('/dashboard/logout', { _csrf: csrf })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/dashboard/login')
    expect((await browser.get('/dashboard/jobs')).status).toBe(303)
  })

  test('a copy of the session cookie stops working when the session logs out', async () => {
    const browser = new Browser(app)
    await browser.login()
    const copy = new Browser(app)
    copy.cookies.set('sluice_session', browser.cookies.get('sluice_session')!)
    expect((await copy.get('/dashboard/jobs')).status).toBe(200)
    const csrf = /name="_csrf" value="([0-9a-f]{64})"/.exec(await browser.page('/dashboard/jobs'))![1]!
    expect((await browser.post('/dashboard/logout', { _csrf: csrf })).status).toBe(303)
    // The copy still carries a well-signed, unexpired cookie: the logout is what refuses it.
    expect(copy.cookies.get('sluice_session')).toBeDefined()
    expect((await copy.get('/dashboard/jobs')).status).toBe(303)
    expect((await copy.post('/dashboard/queues/default/pause', { _csrf: csrf })).status).toBe(401)
    // On another instance of the app too (the ended session is a row, not memory).
    const elsewhere = new Browser(appFor(t, { dashboard: true }))
    elsewhere.cookies.set('sluice_session', copy.cookies.get('sluice_session')!)
    expect((await elsewhere.get('/dashboard/jobs')).status).toBe(303)
    // Another session goes on.
    const other = new Browser(app)
    await other.login()
    expect((await other.get('/dashboard/jobs')).status).toBe(200)
  })

  test('the log-in page shows a visitor no navigation, refresh selector or read-only badge', async () => {
    const login = await new Browser(app).page('/dashboard/login')
    expect(login).not.toContain('<nav')
    expect(login).not.toContain('data-refresh')
    expect(login).not.toContain('read-only')
    expect(login).toContain('data-theme-toggle')
    // Nor does an error shown to a visitor; a page behind the log-in has them all.
    const error = await new Browser(app).post('/dashboard/queues/default/pause', {})
    expect(error.status).toBe(401)
    expect(await error.text()).not.toContain('<nav')
    const browser = new Browser(app)
    await browser.login()
    const page = await browser.page('/dashboard/jobs')
    expect(page).toContain('<nav')
    expect(page).toContain('data-refresh')
  })

  test('20 wrong secrets in a row slow the client down; the right one then works within the documented bound', async () => {
    const throttled = appFor(t, {
      dashboard: { loginThrottle: { freeAttempts: 5, baseDelayMs: 1000, maxDelayMs: 4000 } },
    })
    const attempt = (secret: string, ip = '203.0.113.9') =>
      throttled.request('http://localhost/dashboard/login', {
        method: 'POST',
        headers: {
          'X-Forwarded-For': `${ip}, 10.0.0.1`,
          'Content-Type': 'application/x-www-form-urlencoded',
          Origin: 'http://localhost',
        },
        body: new URLSearchParams({ secret }).toString(),
      })
    const statuses: number[] = []
    for (let i = 0; i < 20; i++) statuses.push((await attempt('sk_wrong_000000000000000000')).status)
    // Five free attempts, then refused without a look at the secret until the delay runs out.
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401])
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true)
    const refused = await attempt('sk_current_2f6b1c8e9a0d4e7f')
    expect(refused.status).toBe(429)
    const wait = Number(refused.headers.get('retry-after'))
    expect(wait).toBeGreaterThanOrEqual(1)
    expect(wait).toBeLessThanOrEqual(4)
    expect(await refused.text()).toContain('Too many attempts')
    // Another client is not slowed down by this one.
    expect((await attempt('sk_current_2f6b1c8e9a0d4e7f', '198.51.100.7')).status).toBe(303)
    // The right secret works once the delay has run out, within maxDelayMs of the last attempt.
    const started = Date.now()
    let res = refused
    while (res.status === 429 && Date.now() - started < 10_000) {
      await new Promise((r) => setTimeout(r, 100))
      res = await attempt('sk_current_2f6b1c8e9a0d4e7f')
    }
    expect(res.status).toBe(303)
    expect(Date.now() - started).toBeLessThan(4000 + 1000)
  })

  test('an authorize callback replaces the log-in: refused is 403, allowed needs no secret', async () => {
    const guarded = appFor(t, {
      dashboard: { authorize: (c) => c.req.header('x-sso-user') === 'ada' },
    })
    expect((await guarded.request('/dashboard/jobs')).status).toBe(403)
    const ok = await guarded.request('/dashboard/jobs', { headers: { 'x-sso-user': 'ada' } })
    expect(ok.status).toBe(200)
    expect(await ok.text()).not.toContain('/logout')
  })

  test('auth: false serves the dashboard open (local development)', async () => {
    const open = createApp(t.sluice, { auth: false, dashboard: true, onError: () => {} })
    expect((await open.request('/dashboard/queues')).status).toBe(200)
  })

  test('security headers on pages, log-in and errors', async () => {
    const browser = new Browser(app)
    await browser.login()
    for (const path of ['/dashboard', '/dashboard/login', '/dashboard/jobs/999999', '/dashboard/nope']) {
      const res = await browser.get(path)
      expect(res.headers.get('x-frame-options'), path).toBe('DENY')
      expect(res.headers.get('content-security-policy'), path).toContain("frame-ancestors 'none'")
      expect(res.headers.get('content-security-policy'), path).toContain("script-src 'self'")
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff')
      expect(res.headers.get('referrer-policy'), path).toBe('same-origin')
      expect(res.headers.get('cache-control'), path).toBe('no-store')
    }
  })

  test('bad options are refused when the app is built', () => {
    expect(() => appFor(t, { dashboard: { path: 'dash' } })).toThrow(/dashboard/)
    expect(() => appFor(t, { dashboard: { path: '/api/v1/x' } })).toThrow(/shadow/)
    expect(() => appFor(t, { dashboard: { readOnly: 'yes' } as never })).toThrow(/readOnly/)
    expect(() => appFor(t, { dashboard: { defaultRefreshSeconds: 3 } as never })).toThrow(
      'Invalid createApp dashboard option: defaultRefreshSeconds must be 0, 2, 5 or 15',
    )
    expect(() => appFor(t, { dashboard: { mountedAt: '/sluice/' } })).toThrow(
      /mountedAt must be a path prefix/,
    )
  })

  test('without a secret to log in with, the dashboard is created and its login says SLUICE_SECRET', async () => {
    const reported: unknown[] = []
    const app = createApp(t.sluice, {
      env: { CRON_SECRET: 'cron_5e8a1f0c7b2d9e4a6c3b' },
      dashboard: true,
      onError: (error) => reported.push(error),
    })
    const res = await app.request('/dashboard/jobs')
    expect(res.status).toBe(500)
    expect(String(reported[0])).toMatch(/SLUICE_SECRET/)
    // Reported once, and answered as the dashboard's own error page.
    expect(reported).toHaveLength(1)
    expect(res.headers.get('content-type')).toContain('text/html')
  })
})
