import * as z from 'zod'
import { parseQuery } from '../form.js'
import { html, number, pretty, table, time } from '../html.js'
import type { Page } from './types.js'

const querySchema = z.object({
  id: z.preprocess((v) => (v === '' ? undefined : v), z.string().max(20).optional()),
})

export const batchesPage: Page = {
  route: '/batches',
  nav: '/batches',
  async render(sluice, view, c) {
    const { id } = parseQuery(querySchema, c.req.query())
    const batch = id === undefined ? undefined : await sluice.inspect.batch(id)
    const lookup = html`<form method="get" action="${view.base}/batches" class="filter"><label>Batch id <input name="id" inputmode="numeric" value="${id ?? ''}" required></label><button type="submit">Show</button></form>`
    if (batch === undefined) return { title: 'Batches', body: lookup }
    if (batch === null) return { title: 'Batches', body: html`${lookup}<p class="empty">No batch ${id}.</p>` }
    const done = batch.completed + batch.discarded
    const body = html`${lookup}
${table(
  'Batch',
  ['Id', 'Jobs', 'Completed', 'Discarded', 'Progress', 'Sealed', 'Created', 'Finished'],
  [
    html`<tr data-batch-id="${batch.id}"><td class="mono">${batch.id}</td><td class="num">${number(batch.total)}</td>
<td class="num">${number(batch.completed)}</td><td class="num">${number(batch.discarded)}</td>
<td><progress max="${Math.max(batch.total, 1)}" value="${done}">${done}/${batch.total}</progress></td>
<td>${batch.sealed ? 'yes' : 'no (jobs may still join)'}</td><td>${time(batch.createdAt)}</td><td>${time(batch.finishedAt)}</td></tr>`,
  ],
)}
<h2>Properties</h2>${pretty(batch.properties)}`
    return { title: 'Batches', body }
  },
}
