/**
 * The dashboard's doors in a real browser: nothing is shown without a session, a wrong secret
 * gets none, and an action posted without the page's CSRF token (from the page itself or from
 * another site) is refused and changes nothing.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { expect, test } from 'vitest'
import { newContext } from './chromium.js'
import { describeDashboard, logIn, watch } from './fixture.js'
import { QUEUES } from './seed.js'
import { SECRET } from './server.js'

describeDashboard('dashboard authentication and CSRF', (d) => {
  /** What the page shows that only a logged-in operator may see. */
  async function showsData(page: Page): Promise<boolean> {
    const rows = await page.locator('tr[data-job-id], tr[data-queue], tr[data-dead-letter-id]').count()
    const text = (await page.content()).includes('ada@example.com')
    return rows > 0 || text
  }

  test('without a session every page leads to the login form and shows no data', async () => {
    const { browser, served } = d()
    const context = await newContext(browser)
    const page = await context.newPage()
    for (const path of ['/', '/jobs', '/queues', `/jobs/${d().seeded.ids.ready[0]}`, '/database']) {
      await page.goto(served.url(path))
      expect(new URL(page.url()).pathname, `${path}: redirected to the login page`).toBe('/dashboard/login')
      expect(await page.locator('input[name="secret"]').count(), `${path}: login form`).toBe(1)
      expect(await showsData(page), `${path}: data shown without a session`).toBe(false)
    }
    await context.close()
  })

  test('a wrong secret is refused: no session cookie, still the login form', async () => {
    const { browser, served } = d()
    const context = await newContext(browser)
    const page = await context.newPage()
    await logIn(page, served, 'not-the-secret-at-all')
    expect(await page.locator('input[name="secret"]').count()).toBe(1)
    expect(await context.cookies()).toEqual([])
    await page.goto(served.url('/jobs'))
    expect(await page.locator('input[name="secret"]').count()).toBe(1)
    expect(await showsData(page)).toBe(false)
    await context.close()
  })

  test('the right secret opens the pages and sets an HttpOnly, SameSite=Strict cookie scoped to the dashboard', async () => {
    const context = await newContext(d().browser)
    const page = await context.newPage()
    await logIn(page, d().served, SECRET)
    expect(new URL(page.url()).pathname).not.toBe('/dashboard/login')
    const [cookie, ...others] = await context.cookies()
    expect(others).toEqual([])
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard' })
    await page.goto(d().served.url('/jobs'))
    expect(await showsData(page)).toBe(true)
    await context.close()
  })

  const paused = async (): Promise<boolean> => {
    const states = await d().seeded.sluice.queueStates()
    return states.find((q) => q.name === QUEUES.pausable)?.paused ?? false
  }

  test('a POST from the page without its CSRF token, or with a wrong one, gets 403 and pauses nothing', async () => {
    const context = await d().loggedIn()
    const page = await context.newPage()
    await page.goto(d().served.url('/queues'))
    const form = page.locator(`tr[data-queue="${QUEUES.pausable}"] form:has(button[data-action="pause"])`)
    const action = await form.evaluate((f) => (f as HTMLFormElement).action)
    const token = await form.locator('input[name="_csrf"]').inputValue()
    expect(token).not.toBe('')
    const post = (fields: Record<string, string>) =>
      page.evaluate(
        async ([url, body]) =>
          (
            await fetch(url!, {
              method: 'POST',
              body: new URLSearchParams(body as Record<string, string>),
              redirect: 'manual',
            })
          ).status,
        [action, fields] as const,
      )
    expect(await post({})).toBe(403)
    expect(await post({ _csrf: `${token.slice(0, -2)}xx` })).toBe(403)
    expect(await post({ _csrf: '' })).toBe(403)
    expect(await paused()).toBe(false)
    await context.close()
  })

  test('a form on another site posting to the dashboard gets 403 and pauses nothing', async () => {
    const context = await d().loggedIn()
    const page = await context.newPage()
    await page.goto(d().served.url('/queues'))
    const action = await page
      .locator(`tr[data-queue="${QUEUES.pausable}"] form:has(button[data-action="pause"])`)
      .evaluate((f) => (f as HTMLFormElement).action)
    // Another origin (another port) serving a page with a forged form: what a phishing page would do.
    const evil: Server = createServer((_, res) => {
      res.setHeader('Content-Type', 'text/html')
      res.end(
        `<!doctype html><form method="post" action="${action}">` +
          `<input type="hidden" name="_csrf" value="forged"><button id="go">win a prize</button></form>`,
      )
    })
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve))
    try {
      const problems = watch(page, (url, status) => url === action && status === 403)
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`)
      const [answered] = await Promise.all([
        page.waitForResponse((r) => r.url() === action && r.request().method() === 'POST'),
        page.locator('#go').click(),
      ])
      expect(answered.status()).toBe(403)
      expect(problems.filter((p) => !p.startsWith('console error'))).toEqual([])
      expect(await paused()).toBe(false)
    } finally {
      await new Promise((resolve) => evil.close(resolve))
      await context.close()
    }
  })
})
