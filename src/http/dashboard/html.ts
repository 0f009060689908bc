/**
 * Small HTML helpers over hono/html: every interpolated value is escaped unless it is itself
 * a fragment built here, so text from the database (payloads, errors, names) is always text.
 */
import { html as honoHtml, raw } from 'hono/html'
import type { View } from './view.js'

export type Html = ReturnType<typeof honoHtml>
export { raw }

/** Characters that reorder the text around them (bidi embeddings, overrides and isolates). */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g

/** Whether the template is inside a tag (an attribute) after `chunk`, given where it was before. */
function inTagAfter(chunk: string, before: boolean): boolean {
  const open = chunk.lastIndexOf('<')
  const close = chunk.lastIndexOf('>')
  return open === close ? before : open > close
}

/**
 * hono's `html`, with the bidi controls of each string interpolated as text shown as `⟨U+202E⟩`:
 * a payload, error or key cannot make the text an operator reads run backwards ("evil" shown as
 * "live"). Values inside a tag (attributes, such as a form's hidden key) are left as they are.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let inTag = false
  return honoHtml(
    strings,
    ...values.map((value, i) => {
      inTag = inTagAfter(strings[i]!, inTag)
      return typeof value === 'string' && !inTag
        ? value.replace(BIDI_CONTROLS, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase()}⟩`)
        : value
    }),
  )
}

export const EMPTY: Html = html``

/** "3 s", "4 min", "2 h", "5 d": the largest unit that keeps the number readable. */
export function duration(ms: number): string {
  const s = Math.abs(ms) / 1000
  if (s < 1) return `${Math.round(Math.abs(ms))} ms`
  if (s < 120) return `${Math.round(s)} s`
  if (s < 7200) return `${Math.round(s / 60)} min`
  if (s < 172_800) return `${Math.round(s / 3600)} h`
  return `${Math.round(s / 86_400)} d`
}

function toDate(value: Date | string | null | undefined): Date | undefined {
  if (value === null || value === undefined) return undefined
  const date = value instanceof Date ? value : new Date(value)
  return Number.isNaN(date.getTime()) ? undefined : date
}

/** A point in time: relative to now, the exact time in the tooltip. */
export function time(value: Date | string | null | undefined, now = Date.now()): Html {
  const date = toDate(value)
  if (!date) return html`<span class="muted">—</span>`
  const delta = date.getTime() - now
  const text = Math.abs(delta) < 1000 ? 'now' : delta < 0 ? `${duration(delta)} ago` : `in ${duration(delta)}`
  const iso = date.toISOString()
  return html`<time datetime="${iso}" title="${iso}">${text}</time>`
}

/** "1 job", "3 jobs". */
export const plural = (n: number, one: string): string =>
  `${n.toLocaleString('en-US')} ${one}${n === 1 ? '' : 's'}`

export const number = (n: number | null | undefined): string =>
  n === null || n === undefined ? '—' : n.toLocaleString('en-US')

/** JSON for the page's script to read: `<` and friends escaped, so no value can end the element. */
export function jsonData(id: string, value: unknown): Html {
  const text = JSON.stringify(value ?? null)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
  return html`<script type="application/json" id="${id}">${raw(text)}</script>`
}

/** A value shown as indented JSON text. */
export const pretty = (value: unknown): Html =>
  html`<pre class="json">${JSON.stringify(value, null, 2)}</pre>`

/** A table that scrolls sideways on a narrow screen instead of widening the page. */
export function table(
  caption: string,
  headers: readonly string[],
  rows: readonly Html[],
  empty = 'None.',
): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0">
<table><thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${rows}</tbody></table></div>`
}

export const section = (title: string, body: Html): Html => html`<section><h2>${title}</h2>${body}</section>`

/** A link to a dashboard page with query parameters (empty ones left out). */
export function href(view: View, path: string, query: Record<string, string | undefined> = {}): string {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, v)
  const q = params.toString()
  return `${view.base}${path}${q ? `?${q}` : ''}`
}

export interface ActionOptions {
  /** Extra hidden fields. */
  fields?: Record<string, string>
  /** Classes of the button (`danger` for destructive ones). */
  danger?: boolean
  /** Where to come back to; default the current page. */
  back?: string
}

/**
 * A POST form with the CSRF token and one button: an action that works without JavaScript.
 * Nothing at all in read-only mode.
 */
export function action(
  view: View,
  path: string,
  name: string,
  label: string,
  options: ActionOptions = {},
): Html {
  if (view.readOnly) return EMPTY
  const fields = Object.entries(options.fields ?? {})
  return html`<form method="post" action="${view.base}${path}" class="action"><input type="hidden" name="_csrf" value="${view.csrf}"><input type="hidden" name="back" value="${options.back ?? view.here}">${fields.map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}<button type="submit" data-action="${name}"${options.danger ? raw(' class="danger"') : ''}>${label}</button></form>`
}

// The moments a reason names, as the database writes them (admission_iso): "until T" or "at T".
const REASON_TIME = /\b(until|at) ([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?Z)/g

/**
 * A reason's text with each moment it names made relative, the exact time in the tooltip:
 * "not due until T" reads "not due for another 5 min", "retrying at T" reads "retrying in 5 min".
 */
export function reasonText(reason: string, now = Date.now()): Html {
  const parts: Html[] = []
  let from = 0
  for (const match of reason.matchAll(REASON_TIME)) {
    const date = toDate(match[2])
    if (!date) continue
    const delta = date.getTime() - now
    const future = delta >= 1000
    const text =
      match[1] === 'until'
        ? future
          ? `for another ${duration(delta)}`
          : `until ${Math.abs(delta) < 1000 ? 'now' : `${duration(delta)} ago`}`
        : future
          ? `in ${duration(delta)}`
          : Math.abs(delta) < 1000
            ? 'now'
            : `${duration(delta)} ago`
    const iso = date.toISOString()
    parts.push(html`${reason.slice(from, match.index)}<time datetime="${iso}" title="${iso}">${text}</time>`)
    from = match.index + match[0].length
  }
  return html`${parts}${reason.slice(from)}`
}

/** A cell stating why a job or partition is not running (empty when nothing stops it). */
export const reasonCell = (reason: string | null | undefined, now = Date.now()): Html =>
  html`<td data-reason>${reason ? reasonText(reason, now) : ''}</td>`

export const badge = (text: string, kind = ''): Html => html`<span class="badge ${kind}">${text}</span>`
