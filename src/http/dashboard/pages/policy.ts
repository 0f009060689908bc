import * as z from 'zod'
import { NotFoundError } from '../../../errors.js'
import type { Sluice } from '../../../sluice.js'
import { parseQuery } from '../form.js'
import { action, EMPTY, type Html, href, html, number, reasonCell, table, time } from '../html.js'
import type { View } from '../view.js'
import type { Page } from './types.js'

const PAGE_SIZE = 100

const querySchema = z.object({
  offset: z.preprocess(
    (v) => (v === '' || v === undefined ? undefined : Number(v)),
    z.number().int().min(0).max(100_000_000).optional(),
  ),
})

/** The cap override of one partition: a number, or empty to clear it (the key is a form field). */
const capForm = (view: View, path: string, partition: string, capOverride: number | null): Html =>
  view.readOnly
    ? EMPTY
    : html`<form method="post" action="${view.base}${path}/cap-partition" class="action"><input type="hidden" name="_csrf" value="${view.csrf}"><input type="hidden" name="back" value="${view.here}"><input type="hidden" name="partition" value="${partition}"><input type="number" name="cap" min="0" max="1000000" step="1" value="${capOverride === null ? '' : String(capOverride)}" aria-label="Cap override of partition ${partition || '(default)'}" placeholder="cap"><button type="submit" data-action="cap-partition">Set cap</button></form>`

/** A policy a job of the code is defined with, or one the database has (it had jobs). */
async function knownPolicy(sluice: Sluice, name: string): Promise<boolean> {
  if (sluice.config.jobs.get(name)?.admission) return true
  return (await sluice.inspect.policies()).some((p) => p.name === name)
}

export const policyPage: Page = {
  route: '/policies/:name',
  nav: '/policies',
  async render(sluice, view, c) {
    const name = c.req.param('name') ?? ''
    const { offset = 0 } = parseQuery(querySchema, c.req.query())
    const partitions = await sluice.inspect.partitions(name, { limit: PAGE_SIZE, offset })
    if (partitions.length === 0 && !(await knownPolicy(sluice, name)))
      throw new NotFoundError(
        `No admission policy ${name}: no job is defined with it, and none has run under it.`,
      )
    const path = `/policies/${encodeURIComponent(name)}`
    const rows = partitions.map((p) => {
      const key = JSON.stringify([name, p.partition])
      return html`<tr data-partition="${p.partition}"><th scope="row"><button type="button" class="watch" data-watch="${key}" aria-pressed="false" aria-label="Watch partition ${p.partition || '(default)'}">☆</button> <span class="mono">${p.partition === '' ? '(default)' : p.partition}</span></th>
<td class="num">${number(p.pending)}</td><td class="num">${number(p.inFlight)}</td>
<td class="num">${p.tokens === null ? '—' : p.tokens.toFixed(1)}</td>
<td class="num">${p.cap ?? '—'}${p.capOverride !== null ? html` <span class="muted">(override)</span>` : EMPTY}</td>
<td class="num">${p.adaptiveCap ?? '—'}</td>
<td class="num">${p.ewmaLagMs === null ? '—' : `${Math.round(p.ewmaLagMs)} ms`} <canvas class="spark" width="80" height="20" data-sparkline="${key}" data-value="${p.ewmaLagMs ?? ''}" aria-hidden="true"></canvas></td>
<td>${p.paused ? 'paused' : p.slowUntil ? html`slowed down, admits again ${time(p.slowUntil)}` : 'open'}</td>
${reasonCell(p.reason)}<td>${time(p.lastAdmittedAt)}</td>
<td class="actions">${
        p.paused
          ? action(view, `${path}/resume-partition`, 'resume-partition', 'Resume', {
              fields: { partition: p.partition },
            })
          : action(view, `${path}/pause-partition`, 'pause-partition', 'Pause', {
              fields: { partition: p.partition },
            })
      }${capForm(view, path, p.partition, p.capOverride)}</td></tr>`
    })
    const pager = html`<p class="pager">${offset > 0 ? html`<a href="${href(view, path, { offset: String(Math.max(0, offset - PAGE_SIZE)) })}">Previous</a> ` : EMPTY}${
      partitions.length === PAGE_SIZE
        ? html`<a href="${href(view, path, { offset: String(offset + PAGE_SIZE) })}">Next</a>`
        : EMPTY
    }</p>`
    const body = html`<p><label><input type="checkbox" data-watched-only> Show watched partitions only</label> <span class="muted">(kept in this browser)</span></p>
${table(
  'Partitions',
  [
    'Partition',
    'Waiting',
    'Running',
    'Tokens',
    'Cap',
    'Adaptive cap',
    'EWMA lag',
    'State',
    'Why not running',
    'Last admitted',
    '',
  ],
  rows,
  'No partition yet: one appears when a job is enqueued into it.',
)}${pager}`
    return { title: `Policy ${name}`, body }
  },
}
