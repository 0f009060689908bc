/**
 * The page's own script in a real browser: the theme follows the system and a toggle that
 * persists, and auto-refresh reloads the page's data on its interval without losing the scroll.
 */
import { expect, test } from 'vitest'
import { describeDashboard, watch } from './fixture.js'

describeDashboard('dashboard theme and auto-refresh', (d) => {
  const theme = () => document.documentElement.dataset.theme

  test('the toggle flips html[data-theme] and the choice survives a reload', async () => {
    const context = await d().loggedIn({ colorScheme: 'light' })
    const page = await context.newPage()
    const problems = watch(page)
    await page.goto(d().served.url('/'))
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'light')
    await page.locator('button[data-theme-toggle]').click()
    expect(await page.evaluate(theme)).toBe('dark')
    await page.reload()
    await page.waitForLoadState('load')
    expect(await page.evaluate(theme)).toBe('dark')
    // Other pages too: the choice is the operator's, not the page's.
    await page.goto(d().served.url('/queues'))
    expect(await page.evaluate(theme)).toBe('dark')
    await page.locator('button[data-theme-toggle]').click()
    expect(await page.evaluate(theme)).toBe('light')
    await page.reload()
    expect(await page.evaluate(theme)).toBe('light')
    expect(problems).toEqual([])
    await context.close()
  })

  test('a browser that prefers dark starts dark', async () => {
    const context = await d().loggedIn({ colorScheme: 'dark' })
    const page = await context.newPage()
    await page.goto(d().served.url('/'))
    expect(await page.evaluate(theme)).toBe('dark')
    await context.close()
  })

  test('auto-refresh every 2 s refreshes the page and keeps the scroll position and the choice', async () => {
    // A short window so the jobs list scrolls.
    const context = await d().loggedIn({ viewport: { width: 1280, height: 300 } })
    const page = await context.newPage()
    const problems = watch(page)
    const url = d().served.url('/jobs')
    await page.goto(url)
    const max = await page.evaluate(() => document.documentElement.scrollHeight - window.innerHeight)
    expect(max, 'the page is long enough to scroll').toBeGreaterThan(50)
    await page.locator('select[data-refresh]').selectOption('2')
    const target = Math.floor(max / 2)
    await page.evaluate((y) => window.scrollTo(0, y), target)
    await page.waitForFunction((y) => Math.abs(window.scrollY - y) <= 1, target)

    // A mark on what is on screen now: a refresh (a swap of <main> or a reload) replaces it.
    await page
      .locator('main#main > *')
      .first()
      .evaluate((e) => e.setAttribute('data-stale', ''))
    // The refresh is the page's next GET of its own URL (a fetch of the page or a reload).
    const refreshed = await page.waitForRequest((r) => r.method() === 'GET' && r.url() === url, {
      timeout: 10_000,
    })
    expect((await refreshed.response())?.status()).toBe(200)
    await page.waitForFunction(
      () => document.querySelector('main#main [data-stale], main#main[data-stale]') === null,
      null,
      {
        timeout: 5_000,
      },
    )
    await page.waitForFunction((y) => Math.abs(window.scrollY - y) <= 1, target, { timeout: 5_000 })
    expect(await page.locator('tr[data-job-id]').count()).toBeGreaterThan(0)
    expect(await page.locator('select[data-refresh]').inputValue()).toBe('2')
    expect(await page.locator('main#main').count()).toBe(1)
    expect(problems).toEqual([])
    await context.close()
  })
})
