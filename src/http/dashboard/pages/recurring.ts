import { action, EMPTY, html, section, table, time } from '../html.js'
import type { Page } from './types.js'

export const recurringPage: Page = {
  route: '/recurring',
  nav: '/recurring',
  async render(sluice, view) {
    const [tasks, runs] = await Promise.all([
      sluice.inspect.recurring(),
      sluice.inspect.recurringRuns(undefined, 200),
    ])
    const defined = table(
      'Recurring tasks',
      ['Task', 'Cron', 'Time zone', 'Job', 'Next slot', 'Last slot', 'Last run', ''],
      tasks.map((task) => {
        const last = task.lastRun
        return html`<tr data-recurring="${task.task}"><th scope="row">${task.task}</th><td class="mono">${task.cron}</td>
<td>${task.timezone}</td><td>${task.job}</td><td>${time(task.nextSlot)}</td>
<td>${
          // Until a slot of its schedule is enqueued (a manual run is none), the stored last slot
          // is only where its schedule started.
          task.slotEnqueued ? time(task.lastSlot) : html`<span class="muted">—</span>`
        }</td>
<td>${
          last
            ? html`${
                // Finished jobs are archived: only a job still in the jobs table has a page.
                last.jobId && ['waiting', 'running', 'blocked'].includes(last.outcome ?? '')
                  ? html`<a href="${view.base}/jobs/${last.jobId}">${last.outcome}</a>`
                  : (last.outcome ?? last.status ?? '')
              }${last.manual ? html` <span class="badge">manual</span>` : EMPTY}`
            : html`<span class="muted">never</span>`
        }</td>
<td class="actions">${action(view, `/recurring/${encodeURIComponent(task.task)}/trigger`, 'trigger', 'Run now')}</td></tr>`
      }),
      'No recurring task is stored: maintenance syncs them from the app (its first run after a deploy).',
    )
    const history = table(
      'History',
      ['Task', 'Slot', 'Job', 'Enqueue', 'Enqueued'],
      runs.map(
        (r) => html`<tr><td>${r.task}</td><td>${time(r.slot)}</td>
<td class="mono">${r.jobId ? html`<a href="${view.base}/jobs/${r.jobId}">${r.jobId}</a>` : '—'}</td>
<td>${r.status ?? ''}</td><td>${time(r.enqueuedAt)}</td></tr>`,
      ),
      'No slot has run yet.',
    )
    return {
      title: 'Recurring',
      body: html`${section('Tasks', defined)}${section('History, newest first', history)}`,
    }
  },
}
