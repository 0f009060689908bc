import { NotFoundError } from '../../../errors.js'
import { missingJob } from '../../../jobs/timeline.js'
import { action, duration, EMPTY, html, pretty, reasonCell, section, table, time } from '../html.js'
import type { Page } from './types.js'

export const jobPage: Page = {
  route: '/jobs/:id',
  nav: '/jobs',
  async render(sluice, view, c) {
    const id = c.req.param('id') ?? ''
    const job = await sluice.inspect.job(id)
    if (!job) throw new NotFoundError(missingJob(id))
    const path = `/jobs/${job.id}`
    // A running job is the drain's; a blocked one waits for a slot, so it can only be cancelled; a
    // dead letter is retried or discarded as one; an archived job is done with.
    const due =
      job.state === 'retrying'
        ? action(view, `${path}/retry`, 'retry', 'Retry now')
        : job.state === 'blocked'
          ? EMPTY
          : action(view, `${path}/run-now`, 'run-now', 'Run now')
    const actions =
      job.state === 'running' || job.state === 'completed' || job.state === 'expired'
        ? EMPTY
        : job.state === 'dead'
          ? html`<div class="actions">${action(view, '/dead-letters/retry', 'retry', 'Retry', { fields: { ids: job.id } })}${action(view, '/dead-letters/discard', 'discard', 'Discard', { fields: { ids: job.id }, danger: true })}</div>`
          : html`<div class="actions">${due}${action(view, `${path}/cancel`, 'cancel', 'Cancel', { danger: true })}</div>`
    const ended =
      job.endedAt === null
        ? html`<tr><th scope="row">Run at</th><td>${time(job.runAt)}</td></tr>`
        : html`<tr><th scope="row">${job.state === 'dead' ? 'Dead-lettered' : job.state === 'expired' ? 'Expired' : 'Completed'}</th><td>${time(job.endedAt)}</td></tr>`
    const facts = html`<div class="table-wrap"><table class="facts"><tbody>
<tr data-job-id="${job.id}" data-state="${job.state}"><th scope="row">State</th><td><span class="state ${job.state}">${job.state}</span></td></tr>
${job.endedAt === null ? html`<tr><th scope="row">Why not running</th>${reasonCell(job.reason)}</tr>` : EMPTY}
<tr><th scope="row">Name</th><td>${job.name}</td></tr>
<tr><th scope="row">Queue</th><td><a href="${view.base}/jobs?queue=${encodeURIComponent(job.queue)}">${job.queue}</a></td></tr>
<tr><th scope="row">Attempts</th><td>${job.attempts} of ${job.maxAttempts}</td></tr>
<tr><th scope="row">Priority</th><td>${job.priority}</td></tr>
${ended}
<tr><th scope="row">Enqueued</th><td>${time(job.enqueuedAt)}</td></tr>
${job.policy !== null ? html`<tr><th scope="row">Admission</th><td><a href="${view.base}/policies/${encodeURIComponent(job.policy)}">${job.policy}</a> partition <span class="mono">${JSON.stringify(job.partition)}</span></td></tr>` : EMPTY}
${job.batchId !== null ? html`<tr><th scope="row">Batch</th><td><a href="${view.base}/batches?id=${job.batchId}">${job.batchId}</a></td></tr>` : EMPTY}
</tbody></table></div>`
    const errors = job.errors.length
      ? html`<ol class="errors">${[...job.errors].reverse().map((e) => html`<li>${pretty(e)}</li>`)}</ol>`
      : html`<p class="empty">No failed attempt.</p>`
    const attempts = table(
      'Attempts',
      ['Attempt', 'Started', 'Ended', 'Ran for', 'Drain', 'Outcome'],
      job.timeline.map(
        (
          a,
        ) => html`<tr data-attempt="${a.attempt}" data-outcome="${a.outcome}"><td class="num">${a.attempt}</td>
<td>${time(a.startedAt)}</td><td>${a.outcome === 'running' ? html`<span class="state running">running</span>` : time(a.endedAt)}</td>
<td class="num">${a.durationMs === null ? '—' : duration(a.durationMs)}</td><td class="mono nowrap">${a.invocation ?? '—'}</td>
<td class="error-text">${a.error ? `${a.error.name ?? 'Error'}: ${a.error.message ?? ''}` : a.outcome === 'running' ? '' : html`<span class="state ${a.outcome}">${a.outcome}</span>`}</td></tr>`,
      ),
      job.attempts === 0 ? 'Not run yet.' : 'No attempt recorded.',
    )
    const size = (n: number | null): string =>
      n === null ? '—' : n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`
    const steps = table(
      'Steps',
      ['#', 'Step', 'Kind', 'State', 'Attempts', 'Started', 'Took', 'Result', 'Error or wait'],
      job.steps.map(
        (s) => html`<tr data-step="${s.name}" data-step-state="${s.state}"><td class="num">${s.seq + 1}</td>
<td class="mono">${s.name}</td><td>${s.kind}</td><td><span class="state ${s.state}">${s.state}</span></td>
<td class="num">${s.attempts}</td><td>${time(s.startedAt)}</td>
<td class="num">${s.durationMs === null ? '—' : duration(s.durationMs)}</td><td class="num">${size(s.resultBytes)}</td>
<td class="error-text">${
          s.error
            ? `${s.error.name ?? 'Error'}: ${s.error.message ?? ''}`
            : s.state === 'waiting'
              ? s.kind === 'event'
                ? html`event <span class="mono">${s.topic}</span> matching <span class="mono">${JSON.stringify(s.match)}</span> until ${time(s.wakeAt)}`
                : html`job <a href="${view.base}/jobs/${s.childId}">${s.childId}</a>`
              : s.kind === 'sleep'
                ? html`until ${time(s.wakeAt)}`
                : ''
        }</td></tr>`,
      ),
      'No step.',
    )
    const body = html`${actions}${facts}
${job.steps.length > 0 ? section('Steps', steps) : EMPTY}
${job.state === 'completed' && job.result !== null ? section('Result', pretty(job.result)) : EMPTY}
${section('Attempts', attempts)}
${section('Payload', pretty(job.payload))}
${section('Error history, newest first', errors)}`
    return { title: `Job ${job.id}`, body }
  },
}
