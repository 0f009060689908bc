import { html, section, table, time } from '../html.js'
import type { Page } from './types.js'

export const recurringPage: Page = {
  route: '/recurring',
  nav: '/recurring',
  async render(sluice, view) {
    const runs = await sluice.inspect.recurringRuns(undefined, 200)
    const tasks = sluice.config.recurring
    const defined = table(
      'Recurring tasks',
      ['Task', 'Cron', 'Time zone', 'Job', 'Next slot', 'Last slot', 'Last outcome'],
      tasks.map((task) => {
        const last = runs.find((r) => r.task === task.name)
        return html`<tr data-recurring="${task.name}"><th scope="row">${task.name}</th><td class="mono">${task.cron}</td>
<td>${task.timezone}</td><td>${task.job.name}</td><td>${time(task.schedule.nextRun())}</td>
<td>${time(last?.slot)}</td><td>${last?.status ?? ''}</td></tr>`
      }),
      'No recurring task is defined in this app.',
    )
    const history = table(
      'History',
      ['Task', 'Slot', 'Job', 'Outcome', 'Enqueued'],
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
