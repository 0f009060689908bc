import { duration, type Html, html, jsonData, number, section, table, time } from '../html.js'
import type { Page } from './types.js'

export const overviewPage: Page = {
  route: '/',
  nav: '/',
  async render(sluice, view) {
    const [queues, stats, drains] = await Promise.all([
      sluice.inspect.queues(),
      sluice.inspect.stats({ sinceMs: 3_600_000, slowest: 5 }),
      sluice.inspect.invocations(),
    ])
    const s = stats.summary
    const tiles: Html = html`<div class="tiles">
<div class="tile"><span>Ready</span><strong>${number(queues.reduce((n, q) => n + q.ready, 0))}</strong></div>
<div class="tile"><span>Running</span><strong>${number(queues.reduce((n, q) => n + q.inFlight, 0))}</strong></div>
<div class="tile"><span>Completed, last hour</span><strong>${number(s.completed)}</strong></div>
<div class="tile${s.failed + s.dead > 0 ? ' bad' : ''}"><span>Failures, last hour</span><strong>${number(s.failed + s.dead + s.expired)}</strong></div>
<div class="tile"><span>Dead letters</span><strong>${number(queues.reduce((n, q) => n + q.deadLettered, 0))}</strong></div>
<div class="tile"><span>Live drains</span><strong>${number(drains.filter((d) => d.live).length)}</strong></div>
</div>`
    const depth = table(
      'Depth per queue',
      ['Queue', 'Ready', 'Scheduled', 'Running', 'Blocked', 'Dead', 'Oldest ready', 'State'],
      queues.map(
        (
          q,
        ) => html`<tr data-queue="${q.queue}"><th scope="row"><a href="${view.base}/jobs?queue=${encodeURIComponent(q.queue)}">${q.queue}</a></th>
<td class="num">${number(q.ready)}</td><td class="num">${number(q.delayed)}</td><td class="num">${number(q.inFlight)}</td>
<td class="num">${number(q.blocked)}</td><td class="num">${number(q.deadLettered)}</td>
<td class="num">${q.ready > 0 ? duration(q.oldestReadyAgeSeconds * 1000) : '—'}</td>
<td>${q.paused ? 'paused' : q.breakerUntil ? html`breaker open until ${time(q.breakerUntil)}` : 'running'}</td></tr>`,
      ),
      'No queues yet.',
    )
    const live = table(
      'Live drains',
      ['Invocation', 'Queues', 'Started', 'Lease until', 'Jobs done'],
      drains.map(
        (
          d,
        ) => html`<tr><td class="mono">${d.id}</td><td>${d.queues.join(', ') || 'all'}</td><td>${time(d.startedAt)}</td>
<td>${time(d.expiresAt)}${d.live ? '' : ' (expired)'}</td><td class="num">${number(d.jobsDone)}</td></tr>`,
      ),
      'No drain is running.',
    )
    const body = html`${tiles}
${section('Throughput per minute, last hour', html`<div class="chart" data-chart="throughput" data-source="throughput-data" role="img" aria-label="Jobs completed and failed per minute over the last hour"></div>${jsonData('throughput-data', stats.throughput)}`)}
${section('Queues', depth)}
${section('Drains running', live)}`
    return { title: 'Overview', body, charts: true }
  },
}
