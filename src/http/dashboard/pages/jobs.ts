import * as z from 'zod'
import { BULK_STATES } from '../../../controls/bulk.js'
import { JOB_STATES } from '../../../sql/jobs.js'
import { parseQuery } from '../form.js'
import { action, EMPTY, href, html, table } from '../html.js'
import { JOB_HEADERS, jobRow } from './job-row.js'
import type { Page } from './types.js'

const PAGE_SIZE = 100
const blank = (v: unknown) => (v === '' ? undefined : v)

export const jobsQuerySchema = z.object({
  queue: z.preprocess(blank, z.string().max(200).optional()),
  name: z.preprocess(blank, z.string().max(200).optional()),
  state: z.preprocess(blank, z.enum(JOB_STATES).optional()),
  after: z.preprocess(blank, z.string().max(20).optional()),
})

export const jobsPage: Page = {
  route: '/jobs',
  nav: '/jobs',
  async render(sluice, view, c) {
    const query = parseQuery(jobsQuerySchema, c.req.query())
    const jobs = await sluice.inspect.jobs({
      ...(query.queue ? { queue: query.queue } : {}),
      ...(query.name ? { name: query.name } : {}),
      ...(query.state ? { state: query.state } : {}),
      ...(query.after ? { after: query.after } : {}),
      limit: PAGE_SIZE,
    })
    const option = (value: string, selected: string | undefined) =>
      html`<option value="${value}"${value === (selected ?? '') ? html` selected` : EMPTY}>${value || 'any'}</option>`
    const names = [...sluice.config.jobs.keys()].sort()
    const filter = html`<form method="get" action="${view.base}/jobs" class="filter">
<label>Queue <select name="queue">${['', ...sluice.config.queues].map((q) => option(q, query.queue))}</select></label>
<label>Name <select name="name">${['', ...names].map((n) => option(n, query.name))}</select></label>
<label>State <select name="state">${['', ...JOB_STATES].map((s) => option(s, query.state))}</select></label>
<button type="submit">Filter</button> <a href="${view.base}/jobs">Clear</a></form>`
    const last = jobs.at(-1)
    const next =
      jobs.length === PAGE_SIZE && last
        ? html`<p><a href="${href(view, '/jobs', { queue: query.queue, name: query.name, state: query.state, after: last.id })}">Next page</a></p>`
        : EMPTY
    const bulkState = query.state === undefined || (BULK_STATES as readonly string[]).includes(query.state)
    const fields = {
      ...(query.queue ? { queue: query.queue } : {}),
      ...(query.name ? { name: query.name } : {}),
      ...(query.state ? { state: query.state } : {}),
    }
    const bulk =
      Object.keys(fields).length > 0 && bulkState && !view.readOnly
        ? html`<div class="actions bulk"><span>Every job matching this filter (up to 1,000 at a time; running jobs and jobs in a batch stay):</span>${action(view, '/jobs/bulk-retry', 'bulk-retry', 'Retry failed now', { fields })}${action(view, '/jobs/bulk-cancel', 'bulk-cancel', 'Cancel all', { fields, danger: true })}</div>`
        : EMPTY
    const body = html`${filter}${bulk}
${table(
  'Jobs',
  JOB_HEADERS,
  jobs.map((job) => jobRow(view, job)),
  'No jobs match.',
)}${next}`
    return { title: 'Jobs', body }
  },
}
