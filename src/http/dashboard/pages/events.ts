import { duration, html, number, section, table, time } from '../html.js'
import type { Page } from './types.js'

export const eventsPage: Page = {
  route: '/events',
  nav: '/events',
  async render(sluice, view) {
    // One statement: inspect.events().
    const events = await sluice.inspect.events()
    const now = new Date(events.now).getTime()
    const o = events.outbox
    const outbox = html`<div class="tiles">
<div class="tile${o.pending > 0 && o.oldestPendingAgeSeconds > 60 ? ' bad' : ''}"><span>Outbox pending</span><strong>${number(o.pending)}</strong></div>
<div class="tile"><span>Oldest pending</span><strong>${o.pending > 0 ? duration(o.oldestPendingAgeSeconds * 1000) : '—'}</strong></div>
<div class="tile" data-published><span>Published, last hour</span><strong>${number(events.routedLastHour)}</strong></div>
<div class="tile"><span>Relayed from the outbox, last hour</span><strong>${number(o.publishedLastHour)}</strong></div>
</div>
<p class="muted">Published: events delivered to at least one subscriber, directly or through the outbox.</p>`
    const subscribers = table(
      'Subscribers',
      ['Subscriber', 'Topic pattern', 'Queue', 'Deliveries, last hour', 'Processed marks', 'Last delivery'],
      events.subscribers.map(
        (
          s,
        ) => html`<tr data-subscriber="${s.name}"><th scope="row"><a href="${view.base}/jobs?name=${encodeURIComponent(s.name)}">${s.name}</a></th>
<td class="mono">${s.pattern}</td><td>${s.queue}</td><td class="num">${number(s.deliveriesLastHour)}</td>
<td class="num">${number(s.processed)}</td><td>${time(s.lastDeliveryAt, now)}</td></tr>`,
      ),
      'No subscriber is stored: they are synced from the app by migrate() and maintenance.',
    )
    return { title: 'Events', body: html`${section('Outbox', outbox)}${section('Subscribers', subscribers)}` }
  },
}
