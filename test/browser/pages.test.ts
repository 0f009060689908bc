/**
 * Every dashboard page in a real browser, logged in: it loads without an error of any kind,
 * has the common frame, fits a 360 px wide screen, and is photographed in light and dark.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { expect, test } from 'vitest'
import { describeDashboard, NAV_PATHS, pages, watch } from './fixture.js'

/** SLUICE_SCREENSHOTS=docs/screenshots writes them for the README; by default they are test output. */
const SHOTS = process.env.SLUICE_SCREENSHOTS || 'test-results/screenshots'

const trimSlash = (path: string): string => path.replace(/(.)\/$/, '$1')

/** The frame every page shares (see the dashboard's HTML contract), read in one round trip. */
async function expectFrame(page: Page, path: string): Promise<void> {
  const frame = await page.evaluate(() => ({
    mains: document.querySelectorAll('main#main').length,
    h1: document.querySelector('h1')?.textContent?.trim() ?? '',
    toggles: document.querySelectorAll('button[data-theme-toggle]').length,
    refresh: Array.from(
      document.querySelectorAll('select[data-refresh] option'),
      (o) => (o as HTMLOptionElement).value,
    ),
    links: Array.from(
      document.querySelectorAll('nav a[href]'),
      (a) => new URL((a as HTMLAnchorElement).href).pathname,
    ),
  }))
  expect(frame.mains, `${path}: <main id="main">`).toBe(1)
  expect(frame.h1, `${path}: <h1>`).not.toBe('')
  expect(frame.toggles, `${path}: theme toggle`).toBe(1)
  expect(frame.refresh, `${path}: refresh choices`).toEqual(['0', '2', '5', '15'])
  const linked = frame.links.map(trimSlash)
  for (const href of NAV_PATHS) expect(linked, `${path}: nav link to ${href}`).toContain(trimSlash(href))
}

describeDashboard('dashboard pages', (d) => {
  mkdirSync(SHOTS, { recursive: true })

  for (const theme of ['light', 'dark'] as const) {
    test(`every page in ${theme}: 200, the common frame, no console error, page error or failed request; a screenshot at 1280×800`, async () => {
      const { served, seeded } = d()
      const context = await d().loggedIn({ colorScheme: theme })
      const page = await context.newPage()
      const problems = watch(page)
      for (const { name, path } of pages(seeded)) {
        const response = await page.goto(served.url(path))
        expect(response?.status(), path).toBe(200)
        await page.waitForFunction((t) => document.documentElement.dataset.theme === t, theme)
        await expectFrame(page, path)
        await page.screenshot({ path: join(SHOTS, `${name}-${theme}.png`) })
      }
      expect(problems).toEqual([])
      await context.close()
    }, 120_000)
  }

  test('a hostile payload is shown as text on its job page, never run', async () => {
    const context = await d().loggedIn()
    const page = await context.newPage()
    const problems = watch(page)
    const dialogs: string[] = []
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message())
      void dialog.dismiss()
    })
    await page.goto(d().served.url(`/jobs/${d().seeded.ids.ready[1]}`))
    const shown = await page.evaluate(() => ({
      text: document.getElementById('main')?.textContent ?? '',
      injected: Array.from(document.querySelectorAll('main script')).filter(
        (s) => !(s as HTMLScriptElement).type.includes('json'),
      ).length,
    }))
    expect(shown.text).toContain('<script>alert(1)</script>@example.com')
    expect(shown.injected).toBe(0)
    expect(dialogs).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  })

  test('at 360 px wide no page overflows horizontally (wide tables scroll inside their wrapper)', async () => {
    const { served, seeded } = d()
    const context = await d().loggedIn({ viewport: { width: 360, height: 740 } })
    const page = await context.newPage()
    const overflowing: string[] = []
    for (const { path } of pages(seeded)) {
      await page.goto(served.url(path))
      const [scrollWidth, innerWidth] = await page.evaluate(() => [
        document.documentElement.scrollWidth,
        window.innerWidth,
      ])
      if (scrollWidth! > innerWidth!) overflowing.push(`${path}: ${scrollWidth} > ${innerWidth}`)
    }
    expect(overflowing).toEqual([])
    await context.close()
  }, 120_000)
})
