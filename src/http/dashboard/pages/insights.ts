import * as z from 'zod'
import { parseQuery } from '../form.js'
import { duration, EMPTY, html, jsonData, number, section, table } from '../html.js'
import type { Page } from './types.js'

/** The windows offered, label → ms. */
const WINDOWS: Record<string, number> = {
  '1h': 3_600_000,
  '6h': 21_600_000,
  '24h': 86_400_000,
  '7d': 604_800_000,
}

const querySchema = z.object({
  window: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['1h', '6h', '24h', '7d']).optional()),
  queue: z.preprocess((v) => (v === '' ? undefined : v), z.string().max(200).optional()),
})

/** The start of the minute holding `ms`, unix seconds. */
const minuteOf = (ms: number): number => Math.floor(ms / 60_000) * 60

const ms = (value: number | null): string => (value === null ? '—' : duration(value))

export const insightsPage: Page = {
  route: '/insights',
  nav: '/insights',
  async render(sluice, view, c) {
    const query = parseQuery(querySchema, c.req.query())
    const window = query.window ?? '1h'
    const stats = await sluice.inspect.stats({
      sinceMs: WINDOWS[window]!,
      slowest: 20,
      ...(query.queue ? { queue: query.queue } : {}),
    })
    const s = stats.summary
    const option = (value: string, selected: string, label = value) =>
      html`<option value="${value}"${value === selected ? html` selected` : EMPTY}>${label}</option>`
    const filter = html`<form method="get" action="${view.base}/insights" class="filter">
<label>Window <select name="window">${Object.keys(WINDOWS).map((w) => option(w, window))}</select></label>
<label>Queue <select name="queue">${['', ...sluice.config.queues].map((q) => option(q, query.queue ?? '', q || 'all'))}</select></label>
<button type="submit">Show</button></form>`
    const tiles = html`<div class="tiles">
<div class="tile"><span>Finished</span><strong>${number(s.finished)}</strong></div>
<div class="tile"><span>Success rate</span><strong>${s.successRate === null ? '—' : `${(s.successRate * 100).toFixed(1)} %`}</strong></div>
<div class="tile"><span>Run time avg / p95</span><strong>${ms(s.avgDurationMs)} / ${ms(s.p95DurationMs)}</strong></div>
<div class="tile"><span>Wait avg / p95</span><strong>${ms(s.avgWaitMs)} / ${ms(s.p95WaitMs)}</strong></div>
</div>`
    const total = Math.max(1, s.finished)
    const statuses = html`<dl class="bars">${(['completed', 'failed', 'dead', 'expired'] as const).map(
      (k) =>
        html`<dt>${k}</dt><dd><meter class="${k}" min="0" max="${total}" value="${stats.statusCounts[k]}"></meter> ${number(stats.statusCounts[k])}</dd>`,
    )}</dl>`
    const slowest = table(
      'Slowest job names',
      ['Name', 'Runs', 'Avg', 'p95', 'Max'],
      stats.slowest.map(
        (
          r,
        ) => html`<tr><td class="nowrap">${r.name}</td><td class="num">${number(r.runs)}</td><td class="num">${ms(r.avgDurationMs)}</td>
<td class="num">${ms(r.p95DurationMs)}</td><td class="num">${ms(r.maxDurationMs)}</td></tr>`,
      ),
      'Nothing finished in this window.',
    )
    const body = html`${filter}${tiles}
${section('Throughput per minute', html`<div class="chart" data-chart="throughput" data-source="throughput-data" data-from="${minuteOf(Date.now() - WINDOWS[window]!)}" data-to="${minuteOf(Date.now())}" role="img" aria-label="Jobs finished per minute by outcome"></div>${jsonData('throughput-data', stats.throughput)}`)}
${section('Outcomes', statuses)}
${section('Slowest job names (by p95 run time)', slowest)}`
    return { title: 'Insights', body, charts: true }
  },
}
