import { html, section, table, time } from '../html.js'
import type { Page } from './types.js'

export const databasePage: Page = {
  route: '/database',
  nav: '/database',
  async render(sluice) {
    const status = await sluice.inspect.status()
    const tasks = table(
      'Maintenance tasks',
      ['Task', 'Last run', 'Next run', 'Rows', 'Last error'],
      status.maintenance.map(
        (
          m,
        ) => html`<tr><th scope="row">${m.task}</th><td>${time(m.lastStartedAt)}</td><td>${time(m.nextRunAt)}</td>
<td class="num">${m.lastRows ?? '—'}</td><td class="error-text">${m.lastError ?? ''}</td></tr>`,
      ),
      'Maintenance has not run yet.',
    )
    const body = html`<p>Schema version <strong>${status.version}</strong>, database clock ${time(status.now)}.</p>
${section('Maintenance', tasks)}`
    return { title: 'Database', body }
  },
}
