import * as z from 'zod'
import { BULK_STATES } from '../../../controls/bulk.js'
import { JOB_STATES } from '../../../sql/jobs.js'
import { parseQuery } from '../form.js'
import { action, EMPTY, href, html, table } from '../html.js'
import { JOB_HEADERS, jobRow } from './job-row.js'
import type { Page } from './types.js'

const PAGE_SIZE = 100
const blank = (v: unknown) => (v === '' ? undefined : v)

/**
 * A moment from a `datetime-local` field (`2026-11-23T23:05`, read as UTC) or ISO 8601 with a
 * zone (`…Z`, `…+01:00`).
 */
const momentSchema = z.preprocess(
  blank,
  z
    .string()
    .max(40)
    .regex(
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?$/,
      'must be a date and time such as 2026-11-23T23:05',
    )
    .refine((text) => {
      // Date rolls 2026-02-30 over to March: refuse a day the month does not have.
      const [y, m, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number]
      return new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d && m >= 1 && m <= 12
    }, 'must be a real date')
    .transform((text) => new Date(/(Z|[+-]\d{2}:\d{2})$/.test(text) ? text : `${text}Z`))
    .refine((date) => !Number.isNaN(date.getTime()), 'must be a real date and time')
    .optional(),
)

/** A moment as a `datetime-local` field shows it, in UTC. */
const local = (date: Date | undefined): string => (date ? date.toISOString().slice(0, 19) : '')

export const jobsQuerySchema = z.object({
  queue: z.preprocess(blank, z.string().max(200).optional()),
  name: z.preprocess(blank, z.string().max(200).optional()),
  state: z.preprocess(blank, z.enum(JOB_STATES).optional()),
  after: z.preprocess(blank, z.string().max(20).optional()),
  since: momentSchema,
  until: momentSchema,
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
      ...(query.since ? { since: query.since } : {}),
      ...(query.until ? { until: query.until } : {}),
      limit: PAGE_SIZE,
    })
    const option = (value: string, selected: string | undefined) =>
      html`<option value="${value}"${value === (selected ?? '') ? html` selected` : EMPTY}>${value || 'any'}</option>`
    const names = [...sluice.config.jobs.keys()].sort()
    const filter = html`<form method="get" action="${view.base}/jobs" class="filter">
<label>Queue <select name="queue">${['', ...sluice.config.queues].map((q) => option(q, query.queue))}</select></label>
<label>Name <select name="name">${['', ...names].map((n) => option(n, query.name))}</select></label>
<label>State <select name="state">${['', ...JOB_STATES].map((s) => option(s, query.state))}</select></label>
<label>Enqueued from <input type="datetime-local" name="since" step="1" value="${local(query.since)}"></label>
<label>until <input type="datetime-local" name="until" step="1" value="${local(query.until)}"> UTC</label>
<button type="submit">Filter</button> <a href="${view.base}/jobs">Clear</a></form>`
    const last = jobs.at(-1)
    const next =
      jobs.length === PAGE_SIZE && last
        ? html`<p><a href="${href(view, '/jobs', {
            queue: query.queue,
            name: query.name,
            state: query.state,
            since: query.since?.toISOString(),
            until: query.until?.toISOString(),
            after: last.id,
          })}">Next page</a></p>`
        : EMPTY
    const bulkState = query.state === undefined || (BULK_STATES as readonly string[]).includes(query.state)
    const fields = {
      ...(query.queue ? { queue: query.queue } : {}),
      ...(query.name ? { name: query.name } : {}),
      ...(query.state ? { state: query.state } : {}),
    }
    // Bulk actions take queue, name and state: with a time filter they would reach beyond the list.
    const timed = query.since !== undefined || query.until !== undefined
    const bulk = timed
      ? html`<p class="muted">Clear the time filter to retry or cancel these jobs in bulk.</p>`
      : Object.keys(fields).length > 0 && bulkState && !view.readOnly
        ? html`<div class="actions bulk"><span>Every job matching this filter (running jobs and jobs in a batch stay):</span>${action(view, '/jobs/bulk-retry', 'bulk-retry', 'Retry failed now', { fields })}${action(view, '/jobs/bulk-cancel', 'bulk-cancel', 'Cancel all', { fields, danger: true })}</div>`
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
