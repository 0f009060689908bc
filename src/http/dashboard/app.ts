/**
 * The operator's dashboard: a Hono app of server-rendered pages and plain HTML forms, mounted
 * by createApp under its path. Every page is the reads it needs through `sluice.inspect`;
 * every action is a POST form checked for session, CSRF token and read-only mode, answered
 * with a redirect back and a flash message, so that all of it works without JavaScript.
 */
import { type Context, Hono } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import { ConfigError, ConflictError, NotFoundError, SluiceError } from '../../errors.js'
import type { Sluice } from '../../sluice.js'
import { type ErrorReporter, HttpError, statusOf } from '../errors.js'
import type { AppAuthOptions, Env } from '../guards.js'
import { ACTIONS } from './actions.js'
import { serveAsset } from './assets.js'
import { readForm } from './form.js'
import { type Html, html } from './html.js'
import { page } from './layout.js'
import { type DashboardOptions, type ResolvedDashboardOptions, resolveDashboardOptions } from './options.js'
import { PAGES } from './pages/index.js'
import type { Page } from './pages/types.js'
import { isHttps, sameDashboard, secureHeaders } from './security.js'
import {
  csrfToken,
  newSession,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  secretMatches,
  sessionId,
  sessionKeys,
  verifyCsrf,
  verifySession,
} from './session.js'
import { clientOf, sessionStore } from './sessions.js'
import type { View } from './view.js'

type DashEnv = { Variables: { base: string } }

const FLASH_COOKIE = 'sluice_flash'

interface Session {
  token: string
  key: CryptoKey
}

export interface DashboardMountOptions {
  dashboard?: boolean | DashboardOptions | undefined
  auth?: AppAuthOptions | false | undefined
  env: Env
  report: ErrorReporter
  /** Show other sessions' SQL text on the database page. Default false. */
  showSessionQueries?: boolean | undefined
}

function secretsOf(auth: AppAuthOptions | false | undefined, env: Env): string[] {
  if (auth === false) return []
  return (
    auth?.secrets ??
    (env.SLUICE_SECRET ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
  )
}

/** Mounts the dashboard on `app` when the `dashboard` option asks for it. */
export function mountDashboard(app: Hono, sluice: Sluice, options: DashboardMountOptions): void {
  const resolved = resolveDashboardOptions(options.dashboard)
  if (!resolved) return
  app.route(resolved.path, dashboardApp(sluice, resolved, options) as unknown as Hono)
}

function dashboardApp(
  sluice: Sluice,
  options: ResolvedDashboardOptions,
  mount: DashboardMountOptions,
): Hono<DashEnv> {
  const mode = options.authorize ? 'authorize' : mount.auth === false ? 'open' : 'login'
  // Read at the first request, not at creation: a framework's build has no environment.
  let known: string[] | undefined
  const secrets = (): string[] => {
    known ??= secretsOf(mount.auth, mount.env)
    if (mode === 'login' && known.length === 0)
      throw new ConfigError(
        'The dashboard logs operators in with the app secret, and there is none: set SLUICE_SECRET or ' +
          '`auth.secrets`, or pass `dashboard: { authorize }` to decide who may see it yourself.',
      )
    return known
  }
  const store = sessionStore(sluice, options.loginThrottle)
  let keys: ReturnType<typeof sessionKeys> | undefined
  const getKeys = () => {
    keys ??= sessionKeys(secrets())
    return keys
  }

  const cookieOptions = (c: Context<DashEnv>, maxAgeSeconds: number) => ({
    path: c.get('base'),
    httpOnly: true,
    secure: isHttps(c),
    sameSite: 'Strict' as const,
    maxAge: maxAgeSeconds,
  })

  const setFlash = (c: Context<DashEnv>, text: string, error: boolean) =>
    setCookie(c, FLASH_COOKIE, JSON.stringify({ t: text.slice(0, 500), e: error }), cookieOptions(c, 60))

  const takeFlash = (c: Context<DashEnv>): View['flash'] => {
    const raw = getCookie(c, FLASH_COOKIE)
    if (raw === undefined) return undefined
    deleteCookie(c, FLASH_COOKIE, { path: c.get('base'), secure: isHttps(c) })
    try {
      const parsed = JSON.parse(raw) as { t?: unknown; e?: unknown }
      return typeof parsed.t === 'string' ? { text: parsed.t, error: parsed.e === true } : undefined
    } catch {
      return undefined
    }
  }

  /** The request's session; a redirect to the log-in page (GET) or a 401 when there is none. */
  const session = async (c: Context<DashEnv>): Promise<Session | Response> => {
    if (options.authorize && !(await options.authorize(c)))
      throw new HttpError(403, 'FORBIDDEN', 'You are not allowed to see this dashboard.')
    const k = await getKeys()
    const token = getCookie(c, SESSION_COOKIE)
    const key = await verifySession(k, token)
    // A session a logout ended stops working on every copy of its cookie.
    if (key && token && !(mode === 'login' && (await store.ended(sessionId(token)!.id))))
      return { token, key }
    if (mode === 'login') {
      if (c.req.method === 'GET') {
        const here = `${options.mountedAt}${c.req.path}${new URL(c.req.url).search}`
        return c.redirect(`${c.get('base')}/login?next=${encodeURIComponent(here)}`, 303)
      }
      throw new HttpError(401, 'UNAUTHORIZED', 'Log in first: the session is missing or has expired.')
    }
    // Behind `authorize` or in open mode a session is issued on sight: it only carries the CSRF token.
    const fresh = await newSession(k)
    setCookie(c, SESSION_COOKIE, fresh, cookieOptions(c, SESSION_TTL_MS / 1000))
    return { token: fresh, key: k.current }
  }

  const viewOf = async (
    c: Context<DashEnv>,
    s: Session | undefined,
    signedIn = s !== undefined,
  ): Promise<View> => ({
    base: c.get('base'),
    here: `${options.mountedAt}${c.req.path}${new URL(c.req.url).search}`,
    csrf: s ? await csrfToken(s.key, s.token) : '',
    readOnly: options.readOnly || s === undefined,
    signedIn,
    canLogOut: mode === 'login' && s !== undefined,
    defaultRefreshSeconds: options.defaultRefreshSeconds,
    refreshable: c.req.method === 'GET',
    flash: takeFlash(c),
    horizonWarning: options.horizonWarning,
    sessionQueries: mount.showSessionQueries ?? false,
  })

  const render = (c: Context<DashEnv>, view: View, title: string, body: Html, status = 200, charts = false) =>
    c.html(page(view, title, body, { charts }), status as 200)

  const servePage = (p: Page) => async (c: Context<DashEnv>) => {
    const s = await session(c)
    if (s instanceof Response) return s
    const view = await viewOf(c, s)
    const { title, body, charts } = await p.render(sluice, view, c)
    return c.html(page(view, title, body, { current: p.nav, charts: charts ?? false }))
  }

  const app = new Hono<DashEnv>()

  app.onError(async (error, c) => {
    let status = 500
    let message = 'Internal error: the details went to the server log.'
    if (error instanceof SluiceError) {
      status = statusOf(error)
      if (status < 500) message = error.message
    } else if (error instanceof HttpError) {
      status = error.status
      message = error.message
    }
    if (status >= 500) mount.report(error, c)
    c.set('base', c.get('base') ?? `${options.mountedAt}${options.path}`)
    // The frame (navigation, tools, log-out) only for a visitor who may see the dashboard, from
    // their session. Without a secret (the error being shown, most likely) there is none.
    const token = getCookie(c, SESSION_COOKIE)
    const key = await Promise.resolve()
      .then(getKeys)
      .then(
        (k) => verifySession(k, token),
        () => undefined,
      )
    // A session a log-out ended is none (and a database that cannot say so ends it here too).
    const ended =
      mode === 'login' && key && token ? await store.ended(sessionId(token)!.id).catch(() => true) : false
    const s = key && token && !ended ? { token, key } : undefined
    const signedIn = mode !== 'login' || s !== undefined
    const view = await viewOf(c, status === 401 ? undefined : s, signedIn && status !== 401)
    // An error page is not fetched again by the automatic refresh.
    view.refreshable = false
    const login =
      status === 401 && mode === 'login' ? html` <a href="${view.base}/login">Log in</a>.` : html``
    const res = await render(
      c,
      view,
      status === 404 ? 'Not found' : 'Error',
      html`<p role="alert" class="flash error">${message}${login}</p>`,
      status,
    )
    secureHeaders(c, false)
    return res
  })

  app.use('*', async (c, next) => {
    // The dashboard's path as the app routes it, and as the browser sees it (`base`).
    const routed = c.req.routePath.replace(/\/\*$/, '')
    c.set('base', `${options.mountedAt}${routed}`)
    const asset = c.req.path.startsWith(`${routed}/assets/`)
    if (c.req.method === 'GET' && c.req.path === `${routed}/`) c.res = await servePage(PAGES[0]!)(c)
    else await next()
    secureHeaders(c, asset && c.res.status === 200)
  })

  app.get('/assets/:file', serveAsset)

  app.get('/login', async (c) => {
    if (mode !== 'login') return c.redirect(`${c.get('base')}/`, 303)
    return loginPage(c, undefined, 200)
  })

  const loginPage = async (c: Context<DashEnv>, error: string | undefined, status: number) => {
    const view = await viewOf(c, undefined)
    if (error) view.flash = { text: error, error: true }
    const next = sameDashboard(view.base, c.req.query('next'))
    return render(
      c,
      view,
      'Log in',
      html`<form method="post" action="${view.base}/login" class="login"><input type="hidden" name="next" value="${next}">
<label for="secret">App secret</label><input id="secret" type="password" name="secret" autocomplete="current-password" required autofocus>
<p class="muted">The secret the app's API takes as its bearer token (SLUICE_SECRET). The session lasts 12 hours.</p>
<button type="submit">Log in</button></form>`,
      status,
    )
  }

  app.post('/login', async (c) => {
    if (mode !== 'login') return c.redirect(`${c.get('base')}/`, 303)
    const form = await readForm(c)
    // Repeated attempts from one client wait longer each time; a refused one is not even checked.
    const client = clientOf(c, options.clientKey)
    const gate = await store.attempt(client)
    if (!gate.admitted) {
      const seconds = Math.max(1, Math.ceil(gate.waitMs / 1000))
      c.header('Retry-After', String(seconds))
      return loginPage(c, `Too many attempts from here: try again in ${seconds} s.`, 429)
    }
    if (!(await secretMatches(secrets(), form.secret ?? '')))
      return loginPage(c, 'That is not the app secret.', 401)
    await store.succeeded(client)
    setCookie(c, SESSION_COOKIE, await newSession(await getKeys()), cookieOptions(c, SESSION_TTL_MS / 1000))
    return c.redirect(sameDashboard(c.get('base'), form.next), 303)
  })

  /** Session, then CSRF token: a forged or stale form changes nothing. */
  const checkedForm = async (c: Context<DashEnv>, s: Session): Promise<Record<string, string>> => {
    const form = await readForm(c)
    if (!(await verifyCsrf(s.key, s.token, form._csrf)))
      throw new HttpError(
        403,
        'FORBIDDEN',
        'This form has expired or did not come from this dashboard: reload the page and try again.',
      )
    return form
  }

  app.post('/logout', async (c) => {
    const s = await session(c)
    if (s instanceof Response) return s
    await checkedForm(c, s)
    if (mode === 'login') {
      const { id, expiresAt } = sessionId(s.token)!
      await store.end(id, expiresAt)
    }
    deleteCookie(c, SESSION_COOKIE, { path: c.get('base'), secure: isHttps(c) })
    return c.redirect(mode === 'login' ? `${c.get('base')}/login` : `${c.get('base')}/`, 303)
  })

  for (const p of PAGES) app.get(p.route, servePage(p))

  for (const a of ACTIONS) {
    app.post(a.route, async (c) => {
      const s = await session(c)
      if (s instanceof Response) return s
      if (options.readOnly)
        throw new SluiceError('READ_ONLY', 'The dashboard is read-only here: it changes nothing.')
      const form = await checkedForm(c, s)
      const base = c.get('base')
      const back = sameDashboard(base, form.back)
      try {
        const result = await a.run(sluice, c, form, { budgetMs: options.actionBudgetMs })
        if (result.confirm) {
          const view = await viewOf(c, s)
          const { title, body } = result.confirm(view)
          return render(c, view, title, body)
        }
        if (result.message) setFlash(c, result.message, false)
        return c.redirect(result.redirect ? `${base}${result.redirect}` : back, 303)
      } catch (error) {
        // The operator's request was fine but the state moved on (the job started, was
        // archived…): say so on the page they came from.
        if (error instanceof ConflictError || error instanceof NotFoundError) {
          setFlash(c, error.message, true)
          return c.redirect(back, 303)
        }
        throw error
      }
    })
  }

  app.all('*', () => {
    throw new NotFoundError('No such page in the dashboard.')
  })

  return app
}
