import { duration, html, number, section, table, time } from '../html.js'
import type { Page } from './types.js'

export const locksPage: Page = {
  route: '/locks',
  nav: '/locks',
  async render(sluice, view) {
    // One statement: inspect.locks().
    const locks = await sluice.inspect.locks()
    const now = new Date(locks.now).getTime()
    const job = (id: string) => html`<a href="${view.base}/jobs/${id}">${id}</a>`
    const unique = table(
      'Uniqueness locks',
      ['Key', 'Strategy', 'State', 'Job', 'Owner', 'Age', 'Expires'],
      locks.uniqueLocks.map(
        (
          u,
        ) => html`<tr data-lock="${u.key}"><td class="mono">${u.key}</td><td>${u.strategy}</td><td>${u.state}</td>
<td class="mono">${job(u.jobId)}</td><td class="mono">${u.owner ?? '—'}</td><td class="num">${duration(u.ageSeconds * 1000)}</td>
<td>${time(u.expiresAt, now)}</td></tr>`,
      ),
      'No uniqueness lock is held.',
    )
    const semaphores = table(
      'Semaphores',
      ['Key', 'Taken', 'Blocked', 'Holders', 'Expires'],
      locks.semaphores.map(
        (
          s,
        ) => html`<tr data-semaphore="${s.key}"><td class="mono">${s.key}</td><td class="num">${s.taken}/${s.limit}</td>
<td class="num">${number(s.blocked)}</td><td class="mono">${s.holders.map((id, i) => html`${i > 0 ? ', ' : ''}${job(id)}`)}</td>
<td>${time(s.expiresAt, now)}</td></tr>`,
      ),
      'No concurrency key is in use.',
    )
    const leases = table(
      'Queue leases',
      ['Queue', 'Owner', 'Age', 'Expires', 'State'],
      locks.queueLeases.map(
        (
          l,
        ) => html`<tr data-queue-lease="${l.queue}"><th scope="row">${l.queue}</th><td class="mono">${l.owner}</td>
<td class="num">${l.ageSeconds === null ? '—' : duration(l.ageSeconds * 1000)}</td><td>${time(l.expiresAt, now)}</td>
<td>${l.live ? 'held' : html`<span class="warn">expired (free for the next drain)</span>`}</td></tr>`,
      ),
      'No queue is held by a single consumer.',
    )
    const body = html`${section('Uniqueness locks (oldest 500)', unique)}
${section('Concurrency semaphores', semaphores)}
${section('Queue leases (single active consumer)', leases)}`
    return { title: 'Locks', body }
  },
}
