import { action, duration, EMPTY, html, number, plural, table, time } from '../html.js'
import type { Page } from './types.js'

export const queuesPage: Page = {
  route: '/queues',
  nav: '/queues',
  async render(sluice, view) {
    const [states, metrics] = await Promise.all([sluice.inspect.queueStates(), sluice.inspect.queues()])
    const depth = new Map(metrics.map((m) => [m.queue, m]))
    const names = [...new Set([...metrics.map((m) => m.queue), ...states.map((s) => s.name)])].sort()
    const byName = new Map(states.map((s) => [s.name, s]))
    const rows = names.map((name) => {
      const s = byName.get(name)
      const m = depth.get(name)
      const q = encodeURIComponent(name)
      const breaker = s?.breakerUntil
        ? html`open, closes ${time(s.breakerUntil)}`
        : s && s.consecutiveFailures > 0
          ? html`closed (${plural(s.consecutiveFailures, 'failure')} in a row)`
          : html`closed`
      const holder = s?.singleConsumer
        ? s.leaseHolder
          ? html`<span class="mono">${s.leaseHolder}</span>, lease ends ${time(s.leaseExpiresAt)}`
          : html`free`
        : html`<span class="muted">—</span>`
      const actions = html`${
        s?.paused || s?.breakerUntil
          ? action(view, `/queues/${q}/resume`, 'resume', 'Resume')
          : action(view, `/queues/${q}/pause`, 'pause', 'Pause')
      }${action(view, `/queues/${q}/purge`, 'purge', 'Purge…', { danger: true })}`
      return html`<tr data-queue="${name}"><th scope="row"><a href="${view.base}/jobs?queue=${q}">${name}</a>${
        s && !s.archive
          ? html` <span class="muted" title="Completed and expired jobs are deleted, not archived">(no archive)</span>`
          : EMPTY
      }</th>
<td>${s?.paused ? html`paused ${time(s.pausedAt)}` : 'running'}</td>
<td class="num">${number(m?.ready)}</td><td class="num">${number(m && m.delayed - m.retrying)}</td>
<td class="num">${number(m?.retrying)}</td><td class="num">${number(m?.inFlight)}</td>
<td class="num">${m && m.ready > 0 ? duration(m.oldestReadyAgeSeconds * 1000) : '—'}</td>
<td>${breaker}${s && s.trips > 0 ? html` <span class="muted">(tripped ${plural(s.trips, 'time')})</span>` : EMPTY}</td>
<td>${holder}</td><td class="num">${s?.globalCap ?? '—'}</td><td class="actions">${actions}</td></tr>`
    })
    const body = table(
      'Queues',
      [
        'Queue',
        'State',
        'Ready',
        'Scheduled',
        'Retrying',
        'Running',
        'Oldest ready',
        'Breaker',
        'Single consumer',
        'Global cap',
        '',
      ],
      rows,
      'No queues yet.',
    )
    return { title: 'Queues', body }
  },
}
