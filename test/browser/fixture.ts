/**
 * What every browser test file shares: one browser, one seeded Sluice served with its dashboard,
 * a logged-in context, and a watch on a page for anything that went wrong in it.
 */
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core'
import { afterAll, beforeAll, describe } from 'vitest'
import { NAV } from '../dashboard/fixture.js'
import { browserAvailable, browserTestsRequired, launchChromium, newContext, skipNotice } from './chromium.js'
import { type Seeded, seed } from './seed.js'
import { DASHBOARD, SECRET, type Served, serve } from './server.js'

export interface Dashboard {
  browser: Browser
  seeded: Seeded
  served: Served
  /**
   * A new context with a session: the first one logs in through the login page, the others
   * start with the cookie it got.
   */
  loggedIn(options?: BrowserContextOptions): Promise<BrowserContext>
}

/**
 * `describe` for a file of browser tests: skipped (with a notice) when there is no Chromium
 * unless the browser tests are required; `body` gets the file's dashboard once it is up.
 */
export function describeDashboard(name: string, body: (d: () => Dashboard) => void): void {
  skipNotice()
  describe.skipIf(!browserAvailable && !browserTestsRequired)(name, () => {
    let current: Dashboard | undefined
    let session: Awaited<ReturnType<BrowserContext['storageState']>> | undefined
    const closers: (() => Promise<unknown>)[] = []
    beforeAll(async () => {
      const browser = await launchChromium()
      closers.push(() => browser.close())
      const seeded = await seed()
      closers.push(() => seeded.cleanup())
      const served = await serve(seeded.sluice)
      closers.push(() => served.close())
      current = {
        browser,
        seeded,
        served,
        async loggedIn(options) {
          if (session) return newContext(browser, { ...options, storageState: session })
          const context = await newContext(browser, options)
          const page = await context.newPage()
          await logIn(page, served, SECRET)
          await page.close()
          // The session cookie the login form set, for the file's other contexts.
          session = await context.storageState()
          return context
        },
      }
    }, 90_000)
    afterAll(async () => {
      for (const close of closers.reverse()) await close()
    })
    body(() => {
      if (!current) throw new Error('the dashboard fixture did not start')
      return current
    })
  })
}

/** Submits the login form with `secret`; resolves once its answer (a session and a redirect, or a refusal) has loaded. */
export async function logIn(page: Page, served: Served, secret: string): Promise<void> {
  await page.goto(served.url('/login'))
  await page.locator('input[name="secret"]').fill(secret)
  const form = page.locator('form:has(input[name="secret"])')
  await Promise.all([
    page.waitForResponse(
      (r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith('/login'),
    ),
    form.locator('button[type="submit"], button:not([type])').first().click(),
  ])
  await page.waitForLoadState('load')
}

/** The pages of the dashboard, each with a name for screenshots and a path under the mount path. */
export function pages(s: Seeded): { name: string; path: string }[] {
  return [
    { name: 'overview', path: '/' },
    { name: 'queues', path: '/queues' },
    { name: 'jobs', path: '/jobs' },
    { name: 'job', path: `/jobs/${s.ids.retrying}` },
    { name: 'dead-letters', path: '/dead-letters' },
    { name: 'invocations', path: '/invocations' },
    { name: 'recurring', path: '/recurring' },
    { name: 'batches', path: '/batches' },
    { name: 'events', path: '/events' },
    { name: 'locks', path: '/locks' },
    { name: 'policies', path: '/policies' },
    { name: 'partitions', path: '/policies/deliver-webhook' },
    { name: 'insights', path: '/insights' },
    { name: 'database', path: '/database' },
  ]
}

/** The static routes every page's nav links to. */
export const NAV_PATHS = NAV.map((p) => `${DASHBOARD}${p}`)

/**
 * Records what went wrong on a page: console errors, uncaught exceptions, requests that failed
 * and responses of 400 or more (with `allow` for the ones a test provokes on purpose).
 */
export function watch(page: Page, allow: (url: string, status: number) => boolean = () => false): string[] {
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()} (${m.location().url})`)
  })
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  page.on('requestfailed', (r) => {
    // A navigation that replaces a page cancels its pending loads: not a failure of the page.
    if (r.failure()?.errorText === 'net::ERR_ABORTED' && r.resourceType() !== 'document') return
    problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`)
  })
  page.on('response', (r) => {
    if (r.status() >= 400 && !allow(r.url(), r.status()))
      problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`)
  })
  return problems
}
