/**
 * Every action of the dashboard: a POST route under the dashboard with the form fields it
 * takes (zod), what it does through the controls, and the message the operator sees after.
 * The app checks session, CSRF token and read-only mode before any of them runs.
 */
import type { Context } from 'hono'
import * as z from 'zod'
import { BULK_STATES } from '../../controls/bulk.js'
import type { Sluice } from '../../sluice.js'
import { optionalText, parseForm } from './form.js'
import { type Html, html, plural } from './html.js'
import { retryMessage } from './retry-message.js'
import type { View } from './view.js'

export interface ActionResult {
  /**
   * A page to show instead of doing anything: the confirmation step of a destructive action,
   * whose form posts again with `confirm=yes`.
   */
  confirm?: (view: View) => { title: string; body: Html }
  /** The flash message after the redirect. */
  message?: string
  /** Where to go instead of the page the form came from (the job is gone after a cancel). */
  redirect?: string
}

export interface Action {
  route: string
  run(sluice: Sluice, c: Context, form: Record<string, string>): Promise<ActionResult>
}

const param = (c: Context, name: string): string => c.req.param(name) ?? ''

const deadLetterForm = z
  .object({ ids: optionalText, queue: optionalText, name: optionalText })
  .refine((f) => f.ids !== undefined || f.queue !== undefined || f.name !== undefined, {
    message: 'needs a dead letter id, a queue or a name (an empty filter would take every dead letter)',
  })

const partitionForm = z.object({ partition: z.string().max(512) })

const bulkForm = z.object({
  queue: optionalText,
  name: optionalText,
  state: z.preprocess((v) => (v === '' ? undefined : v), z.enum(BULK_STATES).optional()),
})

const filterOf = (f: z.output<typeof bulkForm>) => ({
  ...(f.queue ? { queue: f.queue } : {}),
  ...(f.name ? { name: f.name } : {}),
  ...(f.state ? { state: f.state } : {}),
})

const confirmForm = z.object({ confirm: z.literal('yes').optional() })

export const ACTIONS: readonly Action[] = [
  {
    route: '/jobs/:id/retry',
    async run(sluice, c) {
      await sluice.retryJob(param(c, 'id'))
      return { message: `Job ${param(c, 'id')} is due now.` }
    },
  },
  {
    route: '/jobs/:id/run-now',
    async run(sluice, c) {
      await sluice.runJobNow(param(c, 'id'))
      return { message: `Job ${param(c, 'id')} is due now.` }
    },
  },
  {
    route: '/jobs/:id/cancel',
    async run(sluice, c) {
      await sluice.cancelJob(param(c, 'id'))
      return { message: `Job ${param(c, 'id')} was cancelled.`, redirect: '/jobs' }
    },
  },
  {
    route: '/queues/:name/pause',
    async run(sluice, c) {
      await sluice.pause(param(c, 'name'))
      return { message: `Queue ${param(c, 'name')} is paused: drains skip it until it is resumed.` }
    },
  },
  {
    route: '/queues/:name/resume',
    async run(sluice, c) {
      const known = await sluice.resume(param(c, 'name'))
      return {
        message: known
          ? `Queue ${param(c, 'name')} is resumed (and its breaker closed).`
          : `Queue ${param(c, 'name')} has no stored state: nothing to resume.`,
      }
    },
  },
  {
    route: '/queues/:name/purge',
    async run(sluice, c, form) {
      const queue = param(c, 'name')
      if (parseForm(confirmForm, form).confirm === 'yes') {
        const purged = await sluice.purgeQueue(queue)
        return { message: `${plural(purged, 'waiting job')} purged from queue ${queue}.` }
      }
      const depth = (await sluice.inspect.queues()).find((q) => q.queue === queue)
      const waiting = depth ? depth.ready + depth.delayed + depth.blocked : 0
      return {
        confirm: (view) => ({
          title: `Purge queue ${queue}?`,
          body: html`<p>This deletes the <strong>${plural(waiting, 'job')}</strong> waiting in queue <strong>${queue}</strong> (ready, scheduled, retrying and blocked), as cancelling each would. Running jobs and jobs in a batch stay. It cannot be undone.</p>
<div class="actions"><form method="post" action="${view.base}/queues/${encodeURIComponent(queue)}/purge" class="action"><input type="hidden" name="_csrf" value="${view.csrf}"><input type="hidden" name="back" value="${form.back ?? `${view.base}/queues`}"><input type="hidden" name="confirm" value="yes"><button type="submit" data-action="confirm-purge" class="danger">Purge ${plural(waiting, 'job')}</button></form>
<a href="${view.base}/queues">Keep them</a></div>`,
        }),
      }
    },
  },
  {
    route: '/jobs/bulk-retry',
    async run(sluice, _c, form) {
      const ids = await sluice.retryJobs(filterOf(parseForm(bulkForm, form)))
      return { message: `${plural(ids.length, 'job')} made due now (up to 1,000 at a time).` }
    },
  },
  {
    route: '/jobs/bulk-cancel',
    async run(sluice, _c, form) {
      const ids = await sluice.cancelJobs(filterOf(parseForm(bulkForm, form)))
      return { message: `${plural(ids.length, 'job')} cancelled (up to 1,000 at a time).` }
    },
  },
  {
    route: '/recurring/:name/trigger',
    async run(sluice, c) {
      const run = await sluice.triggerRecurring(param(c, 'name'))
      return {
        message: run.id
          ? `Recurring task ${param(c, 'name')} triggered: job ${run.id} (${run.status}).`
          : `Recurring task ${param(c, 'name')} triggered, but no job was enqueued: ${run.status}.`,
      }
    },
  },
  {
    route: '/dead-letters/retry',
    async run(sluice, _c, form) {
      const f = parseForm(deadLetterForm, form)
      const { requeued, kept } = await sluice.deadLetters.retry(
        f.ids ? f.ids : { ...(f.queue ? { queue: f.queue } : {}), ...(f.name ? { name: f.name } : {}) },
      )
      return { message: retryMessage(requeued.length, kept) }
    },
  },
  {
    route: '/dead-letters/discard',
    async run(sluice, _c, form) {
      const f = parseForm(deadLetterForm, form)
      const ids = await sluice.deadLetters.discard(
        f.ids ? f.ids : { ...(f.queue ? { queue: f.queue } : {}), ...(f.name ? { name: f.name } : {}) },
      )
      return { message: `${plural(ids.length, 'dead letter')} discarded.` }
    },
  },
  {
    route: '/policies/:name/pause-partition',
    async run(sluice, c, form) {
      const { partition } = parseForm(partitionForm, form)
      await sluice.pausePartition(param(c, 'name'), partition)
      return { message: `Partition ${JSON.stringify(partition)} of ${param(c, 'name')} is paused.` }
    },
  },
  {
    route: '/policies/:name/resume-partition',
    async run(sluice, c, form) {
      const { partition } = parseForm(partitionForm, form)
      await sluice.resumePartition(param(c, 'name'), partition)
      return { message: `Partition ${JSON.stringify(partition)} of ${param(c, 'name')} is resumed.` }
    },
  },
]
