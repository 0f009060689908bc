import type { JobRow } from '../../../sql/jobs.js'
import { type Html, html, reasonCell, time } from '../html.js'
import type { View } from '../view.js'

export const JOB_HEADERS = [
  'Id',
  'Name',
  'Queue',
  'State',
  'Attempts',
  'Run at',
  'Enqueued',
  'Why not running',
  'Last error',
]

export function jobRow(view: View, job: JobRow): Html {
  return html`<tr data-job-id="${job.id}" data-state="${job.state}"><td class="mono"><a href="${view.base}/jobs/${job.id}">${job.id}</a></td>
<td class="nowrap">${job.name}</td><td class="nowrap">${job.queue}</td><td><span class="state ${job.state}">${job.state}</span></td>
<td class="num">${job.attempts}/${job.maxAttempts}</td><td>${time(job.runAt)}</td><td>${time(job.enqueuedAt)}</td>
${reasonCell(job.reason)}<td class="error-text">${job.lastError?.message ?? ''}</td></tr>`
}
