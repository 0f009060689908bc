import { assetUrl } from './assets.js'
import { EMPTY, type Html, html } from './html.js'
import type { View } from './view.js'

/** Every page, in nav order: path under the dashboard, and title. */
export const NAV: readonly (readonly [string, string])[] = [
  ['/', 'Overview'],
  ['/queues', 'Queues'],
  ['/jobs', 'Jobs'],
  ['/dead-letters', 'Dead letters'],
  ['/invocations', 'Invocations'],
  ['/recurring', 'Recurring'],
  ['/batches', 'Batches'],
  ['/events', 'Events'],
  ['/locks', 'Locks'],
  ['/policies', 'Policies'],
  ['/insights', 'Insights'],
  ['/database', 'Database'],
]

const REFRESH = [0, 2, 5, 15]

export interface PageOptions {
  /** The nav entry to mark as current. */
  current?: string
  /** Load uPlot (pages with charts). */
  charts?: boolean
}

function nav(view: View, current: string | undefined): Html {
  return html`<nav aria-label="Dashboard pages"><ul>${NAV.map(
    ([path, title]) =>
      html`<li><a href="${view.base}${path}"${current === path ? html` aria-current="page"` : EMPTY}>${title}</a></li>`,
  )}</ul></nav>`
}

const THEME_TOGGLE = html`<button type="button" data-theme-toggle aria-label="Switch between light and dark">◐</button>`

function tools(view: View): Html {
  const logout = view.canLogOut
    ? html`<form method="post" action="${view.base}/logout" class="action"><input type="hidden" name="_csrf" value="${view.csrf}"><button type="submit" class="link">Log out</button></form>`
    : EMPTY
  return html`<div class="tools"><label>Refresh <select data-refresh aria-label="Automatic refresh">${REFRESH.map(
    (s) =>
      html`<option value="${s}"${s === view.defaultRefreshSeconds ? html` selected` : EMPTY}>${s === 0 ? 'off' : `${s} s`}</option>`,
  )}</select></label>${THEME_TOGGLE}${
    view.readOnly ? html`<span class="badge">read-only</span>` : EMPTY
  }${logout}</div>`
}

/** The page shell: header with nav and tools, then `<main>` with the title, the flash and the body. */
export function page(view: View, title: string, body: Html, options: PageOptions = {}): Html {
  const flash = view.flash
    ? html`<p role="status" data-flash class="flash${view.flash.error ? ' error' : ''}">${view.flash.text}</p>`
    : EMPTY
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Sluice</title>
<link rel="icon" href="data:,">
${options.charts ? html`<link rel="stylesheet" href="${assetUrl(view.base, 'uplot.css')}">` : EMPTY}
<link rel="stylesheet" href="${assetUrl(view.base, 'dashboard.css')}">
${options.charts ? html`<script src="${assetUrl(view.base, 'uplot.js')}" defer></script>` : EMPTY}
<script src="${assetUrl(view.base, 'dashboard.js')}" defer></script>
</head><body data-default-refresh="${view.defaultRefreshSeconds}"${view.refreshable ? EMPTY : html` data-no-refresh`}>
<a class="skip" href="#main">Skip to content</a>
<header><a class="brand" href="${view.base}/">Sluice</a>${
    view.signedIn
      ? html`${nav(view, options.current)}${tools(view)}`
      : html`<div class="tools">${THEME_TOGGLE}</div>`
  }</header>
<main id="main" tabindex="-1"><h1>${title}</h1>${flash}${body}</main>
</body></html>`
}
