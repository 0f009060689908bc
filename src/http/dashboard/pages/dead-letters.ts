import * as z from 'zod'
import { parseQuery } from '../form.js'
import { action, EMPTY, href, html, table, time } from '../html.js'
import type { Page } from './types.js'

const PAGE_SIZE = 100
const blank = (v: unknown) => (v === '' ? undefined : v)

const querySchema = z.object({
  queue: z.preprocess(blank, z.string().max(200).optional()),
  name: z.preprocess(blank, z.string().max(200).optional()),
  before: z.preprocess(blank, z.string().max(20).optional()),
})

export const deadLettersPage: Page = {
  route: '/dead-letters',
  nav: '/dead-letters',
  async render(sluice, view, c) {
    const query = parseQuery(querySchema, c.req.query())
    const rows = await sluice.inspect.deadLetters({
      ...(query.queue ? { queue: query.queue } : {}),
      ...(query.name ? { name: query.name } : {}),
      ...(query.before ? { before: query.before } : {}),
      limit: PAGE_SIZE,
    })
    const option = (value: string, selected: string | undefined) =>
      html`<option value="${value}"${value === (selected ?? '') ? html` selected` : EMPTY}>${value || 'any'}</option>`
    const filter = html`<form method="get" action="${view.base}/dead-letters" class="filter">
<label>Queue <select name="queue">${['', ...sluice.config.queues].map((q) => option(q, query.queue))}</select></label>
<label>Name <select name="name">${['', ...[...sluice.config.jobs.keys()].sort()].map((n) => option(n, query.name))}</select></label>
<button type="submit">Filter</button> <a href="${view.base}/dead-letters">Clear</a></form>`
    const filterFields = {
      ...(query.queue ? { queue: query.queue } : {}),
      ...(query.name ? { name: query.name } : {}),
    }
    const bulk =
      query.queue || query.name
        ? html`<div class="actions bulk"><span>Every dead letter matching this filter:</span>${action(view, '/dead-letters/retry', 'bulk-retry', 'Retry all', { fields: filterFields })}${action(view, '/dead-letters/discard', 'bulk-discard', 'Discard all', { fields: filterFields, danger: true })}</div>`
        : html`<p class="muted">Pick a queue or a name to retry or discard dead letters in bulk.</p>`
    const list = table(
      'Dead letters',
      ['Id', 'Name', 'Queue', 'Attempts', 'Failed', 'Enqueued', 'Last error', ''],
      rows.map(
        (
          d,
        ) => html`<tr data-dead-letter-id="${d.id}"><td class="mono"><a href="${view.base}/jobs/${d.id}">${d.id}</a></td><td class="nowrap">${d.name}</td><td class="nowrap">${d.queue}</td>
<td class="num">${d.attempts}/${d.maxAttempts}</td><td>${time(d.failedAt)}</td><td>${time(d.enqueuedAt)}</td>
<td class="error-text"><details><summary>${d.lastError?.message ?? '(no message)'}</summary><pre class="json">${JSON.stringify({ payload: d.payload, errors: d.errors }, null, 2)}</pre></details></td>
<td class="actions">${action(view, '/dead-letters/retry', 'retry', 'Retry', { fields: { ids: d.id } })}${action(view, '/dead-letters/discard', 'discard', 'Discard', { fields: { ids: d.id }, danger: true })}</td></tr>`,
      ),
      'No dead letters.',
    )
    const last = rows.at(-1)
    const next =
      rows.length === PAGE_SIZE && last
        ? html`<p><a href="${href(view, '/dead-letters', { ...filterFields, before: last.id })}">Older</a></p>`
        : EMPTY
    return { title: 'Dead letters', body: html`${filter}${bulk}${list}${next}` }
  },
}
