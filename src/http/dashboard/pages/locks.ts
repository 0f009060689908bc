import { html, section, table, time } from '../html.js'
import type { Page } from './types.js'

export const locksPage: Page = {
  route: '/locks',
  nav: '/locks',
  async render(sluice) {
    const states = await sluice.inspect.queueStates()
    const leases = table(
      'Queue leases',
      ['Queue', 'Holder', 'Until'],
      states
        .filter((s) => s.singleConsumer)
        .map(
          (s) =>
            html`<tr data-queue-lease="${s.name}"><th scope="row">${s.name}</th><td class="mono">${s.leaseHolder ?? 'free'}</td><td>${time(s.leaseExpiresAt)}</td></tr>`,
        ),
      'No queue has a single active consumer.',
    )
    return { title: 'Locks', body: section('Queue leases (single active consumer)', leases) }
  },
}
