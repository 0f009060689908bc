import * as z from 'zod'
import type { BatchRow } from '../../../sql/batches.js'
import { parseQuery } from '../form.js'
import { EMPTY, type Html, href, html, number, pretty, section, table, time } from '../html.js'
import type { Page } from './types.js'

const PAGE_SIZES = [25, 50, 100, 200]

const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional())

const querySchema = z.object({
  id: optional(z.string().max(20)),
  before: optional(z.string().regex(/^[0-9]{1,19}$/)),
  limit: optional(z.coerce.number().int().min(1).max(1000)),
})

function batchRow(base: string, b: BatchRow): Html {
  const done = b.completed + b.discarded
  return html`<tr data-batch-id="${b.id}"><td class="mono"><a href="${base}/batches?id=${b.id}">${b.id}</a></td><td class="num">${number(b.total)}</td>
<td class="num">${number(b.completed)}</td><td class="num">${number(b.discarded)}</td>
<td><progress max="${Math.max(b.total, 1)}" value="${done}">${done}/${b.total}</progress></td>
<td>${b.sealed ? 'yes' : 'no (jobs may still join)'}</td><td>${time(b.createdAt)}</td><td>${time(b.finishedAt)}</td></tr>`
}

const HEADERS = ['Id', 'Jobs', 'Completed', 'Discarded', 'Progress', 'Sealed', 'Created', 'Finished']

export const batchesPage: Page = {
  route: '/batches',
  nav: '/batches',
  async render(sluice, view, c) {
    const { id, before, limit = 50 } = parseQuery(querySchema, c.req.query())
    const lookup = html`<form method="get" action="${view.base}/batches" class="filter"><label>Batch id <input name="id" inputmode="numeric" value="${id ?? ''}" required></label><button type="submit">Show</button></form>`
    if (id !== undefined) {
      const batch = await sluice.inspect.batch(id)
      if (batch === null)
        return { title: 'Batches', body: html`${lookup}<p class="empty">No batch ${id}.</p>` }
      const body = html`${lookup}${table('Batch', HEADERS, [batchRow(view.base, batch)])}
<h2>Properties</h2>${pretty(batch.properties)}
<p><a href="${view.base}/batches">All batches</a></p>`
      return { title: 'Batches', body }
    }
    const batches = await sluice.inspect.batches({ limit, ...(before ? { before } : {}) })
    const last = batches.at(-1)
    const sizes = html`<form method="get" action="${view.base}/batches" class="filter"><label>Per page <select name="limit">${PAGE_SIZES.map(
      (n) => html`<option value="${n}"${n === limit ? html` selected` : EMPTY}>${n}</option>`,
    )}</select></label><button type="submit">Show</button></form>`
    const more =
      last && batches.length === limit
        ? html`<p><a data-next href="${href(view, '/batches', { before: last.id, limit: String(limit) })}">Older batches</a></p>`
        : EMPTY
    const list = table(
      'Recent batches',
      HEADERS,
      batches.map((b) => batchRow(view.base, b)),
      before
        ? 'No older batch.'
        : 'No batch yet: batches finished longer ago than their retention are pruned.',
    )
    return {
      title: 'Batches',
      body: html`${lookup}${section(before ? `Batches before ${before}, newest first` : 'Recent batches, newest first', html`${sizes}${list}${more}`)}`,
    }
  },
}
