import { html, number, table } from '../html.js'
import type { Page } from './types.js'

export const policiesPage: Page = {
  route: '/policies',
  nav: '/policies',
  async render(sluice, view) {
    const rows = await sluice.inspect.policies()
    const body = table(
      'Admission policies',
      ['Policy', 'Queue', 'Partitions', 'Paused', 'Waiting', 'Running', 'Global cap'],
      rows.map(
        (
          p,
        ) => html`<tr data-policy="${p.name}"><th scope="row"><a href="${view.base}/policies/${encodeURIComponent(p.name)}">${p.name}</a></th>
<td>${p.queue}</td><td class="num">${number(p.partitions)}</td><td class="num">${number(p.pausedPartitions)}</td>
<td class="num">${number(p.pending)}</td><td class="num">${number(p.inFlight)}</td><td class="num">${p.globalMax ?? '—'}</td></tr>`,
      ),
      'No job has an admission policy.',
    )
    return { title: 'Policies', body }
  },
}
