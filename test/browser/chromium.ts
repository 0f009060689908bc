/**
 * The browser the dashboard's end-to-end tests drive: the system's Chromium through
 * playwright-core (which never downloads one). Without Chromium the tests are skipped with a
 * notice, unless SLUICE_BROWSER_TESTS=required (CI), where its absence fails the suite.
 */
import { existsSync } from 'node:fs'
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium } from 'playwright-core'

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser']

/** CHROMIUM_PATH, else the first Debian/Ubuntu location that exists; undefined when none does. */
export function chromiumPath(): string | undefined {
  const given = process.env.CHROMIUM_PATH
  if (given) return existsSync(given) ? given : undefined
  return CANDIDATES.find((path) => existsSync(path))
}

export const INSTALL_HINT =
  'Install Chromium (Debian/Ubuntu: `apt-get install -y --no-install-recommends chromium`) or set CHROMIUM_PATH to its executable.'

export const browserTestsRequired = process.env.SLUICE_BROWSER_TESTS === 'required'

/** Whether this run has a browser: false when there is none and it is not required (the suite skips). */
export const browserAvailable = chromiumPath() !== undefined

let noticed = false
/** Says once per file why the browser tests are skipped. */
export function skipNotice(): void {
  if (browserAvailable || browserTestsRequired || noticed) return
  noticed = true
  console.info(`Dashboard browser tests skipped: no Chromium found. ${INSTALL_HINT}`)
}

/** Launches the browser; fails with the install hint when there is none. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath()
  if (!executablePath) throw new Error(`No Chromium for the dashboard's browser tests. ${INSTALL_HINT}`)
  return chromium.launch({
    executablePath,
    // In a container, as root: no user-namespace sandbox, and /dev/shm is often tiny.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  })
}

export const DESKTOP = { width: 1280, height: 800 }

/** A fresh context (no cookies, no storage) at 1280×800 unless told otherwise. */
export async function newContext(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: DESKTOP, ...options })
  // A missing element fails the test in seconds, not after playwright's default 30 s; a page
  // load gets longer, as the machine may be busy.
  context.setDefaultTimeout(10_000)
  context.setDefaultNavigationTimeout(20_000)
  return context
}
