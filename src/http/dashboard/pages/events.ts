import { html, section, table } from '../html.js'
import type { Page } from './types.js'

export const eventsPage: Page = {
  route: '/events',
  nav: '/events',
  async render(sluice) {
    const subscribers = table(
      'Subscribers',
      ['Subscriber', 'Topic pattern', 'Queue'],
      sluice.config.subscribers.map(
        (s) =>
          html`<tr data-subscriber="${s.name}"><th scope="row">${s.name}</th><td class="mono">${s.subscriber.topic}</td><td>${s.queue}</td></tr>`,
      ),
      'No subscriber is defined in this app.',
    )
    return { title: 'Events', body: section('Subscribers', subscribers) }
  },
}
