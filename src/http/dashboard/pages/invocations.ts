import { duration, html, number, table, time } from '../html.js'
import type { Page } from './types.js'

export const invocationsPage: Page = {
  route: '/invocations',
  nav: '/invocations',
  async render(sluice) {
    const rows = await sluice.inspect.invocations()
    const now = Date.now()
    const body = table(
      'Drains',
      ['Invocation', 'Queues', 'Priority', 'Started', 'Running for', 'Lease until', 'Jobs done', 'State'],
      rows.map(
        (
          d,
        ) => html`<tr><td class="mono">${d.id}</td><td>${d.queues.join(', ') || 'all'}</td><td class="num">${d.priority}</td>
<td>${time(d.startedAt, now)}</td><td class="num">${duration(now - new Date(d.startedAt).getTime())}</td>
<td>${time(d.expiresAt, now)}</td><td class="num">${number(d.jobsDone)}</td>
<td>${d.live ? 'live' : html`<span class="warn">lease ran out (maintenance reaps it)</span>`}</td></tr>`,
      ),
      'No drain is running.',
    )
    return { title: 'Invocations', body }
  },
}
