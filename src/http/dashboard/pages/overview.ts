import { badge, duration, EMPTY, type Html, html, jsonData, number, section, table, time } from '../html.js'
import type { Page } from './types.js'

/** "~1,200" where a count is estimated from a sample of a large table. */
const count = (n: number, estimated: boolean): string => `${estimated ? '~' : ''}${number(n)}`

/** A state's count: exact, "~41,200 ±3,100" (the estimate's margin), or "≥2,001" (a lower bound). */
const depthCount = (n: number, margin: number | null): string =>
  margin === 0 ? number(n) : margin === null ? `≥${number(n)}` : `~${number(n)} ±${number(margin)}`

export const overviewPage: Page = {
  route: '/',
  nav: '/',
  async render(sluice, view) {
    // inspect.overview(), and the queues' pause and breaker states to mark them.
    const [o, states] = await Promise.all([sluice.inspect.overview(), sluice.inspect.queueStates()])
    const now = new Date(o.now).getTime()
    const stopped = new Map<string, string>()
    for (const q of states) {
      if (q.paused) stopped.set(q.name, 'paused')
      else if (q.breakerUntil && new Date(q.breakerUntil).getTime() > now) stopped.set(q.name, 'breaker open')
    }
    const estimated = o.queues.some((q) => q.estimated)
    const failures = o.lastHour.failed + o.lastHour.dead + o.lastHour.expired
    const tiles: Html = html`<div class="tiles">
<div class="tile"><span>Ready</span><strong>${count(
      o.queues.reduce((n, q) => n + q.ready, 0),
      estimated,
    )}</strong></div>
<div class="tile"><span>Running</span><strong>${number(o.queues.reduce((n, q) => n + q.running, 0))}</strong></div>
<div class="tile"><span>Completed, last hour</span><strong>${number(o.lastHour.completed)}</strong></div>
<div class="tile${failures > 0 ? ' bad' : ''}"><span>Failures, last hour</span><strong>${number(failures)}</strong></div>
<div class="tile"><span>Dead letters</span><strong><a href="${view.base}/dead-letters">${count(o.deadLetters.count, o.deadLetters.estimated)}</a></strong></div>
<div class="tile"><span>Live drains</span><strong><a href="${view.base}/invocations">${number(o.drains.length)}</a></strong></div>
</div>`
    const depth = table(
      'Depth per queue',
      ['Queue', 'Ready', 'Scheduled', 'Retrying', 'Running', 'Blocked', 'Oldest ready'],
      o.queues.map(
        (
          q,
        ) => html`<tr data-queue="${q.queue}"${stopped.has(q.queue) ? html` data-paused` : EMPTY}><th scope="row" class="nowrap"><a href="${view.base}/jobs?queue=${encodeURIComponent(q.queue)}">${q.queue}</a>${
          stopped.has(q.queue) ? html` ${badge(stopped.get(q.queue)!, 'paused')}` : EMPTY
        }</th>
<td class="num">${depthCount(q.ready, q.margin.ready)}</td><td class="num">${depthCount(q.scheduled, q.margin.scheduled)}</td>
<td class="num">${depthCount(q.retrying, q.margin.retrying)}</td><td class="num">${number(q.running)}</td>
<td class="num">${number(q.blocked)}</td>
<td class="num">${q.oldestReadyAgeSeconds > 0 ? duration(q.oldestReadyAgeSeconds * 1000) : '—'}</td></tr>`,
      ),
      'No queues yet.',
    )
    const live = table(
      'Live drains',
      ['Invocation', 'Queues', 'Running for', 'Lease until', 'Jobs done'],
      o.drains.map(
        (d) => html`<tr><td class="mono">${d.id}</td><td>${d.queues.join(', ') || 'all'}</td>
<td class="num">${duration(d.ageSeconds * 1000)}</td><td>${time(d.expiresAt, now)}</td><td class="num">${number(d.jobsDone)}</td></tr>`,
      ),
      'No drain is running.',
    )
    const body = html`${tiles}
${estimated ? html`<p class="muted">~ : estimated from a sample of the jobs table, which is too large to count on every page view; ± gives the range that holds the true count about 19 times in 20, ≥ a count that is at least that. Counts without a sign are exact.</p>` : EMPTY}
${section('Throughput per minute, last hour', html`<div class="chart" data-chart="throughput" data-source="throughput-data" role="img" aria-label="Jobs completed and failed per minute over the last hour"></div>${jsonData('throughput-data', o.throughput)}`)}
${section('Queues', depth)}
${section('Drains running', live)}`
    return { title: 'Overview', body, charts: true }
  },
}
