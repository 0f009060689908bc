/**
 * Every action of the dashboard: a POST route under the dashboard with the form fields it
 * takes (zod), what it does through the controls, and the message the operator sees after.
 * The app checks session, CSRF token and read-only mode before any of them runs.
 */
import type { Context } from 'hono'
import * as z from 'zod'
import { BULK_STATES, MAX_BULK_JOBS } from '../../controls/bulk.js'
import type { Sluice } from '../../sluice.js'
import type { KeptDeadLetter } from '../../sql/dead-letters.js'
import { chunkedMessage, firstId, inChunks, lastId } from './chunks.js'
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
  run(
    sluice: Sluice,
    c: Context,
    form: Record<string, string>,
    limits: { budgetMs: number },
  ): Promise<ActionResult>
}

/** Rows per chunk of an action over many: one statement each (the most one call takes). */
const CHUNK = MAX_BULK_JOBS

const param = (c: Context, name: string): string => c.req.param(name) ?? ''

const deadLetterForm = z
  .object({ ids: optionalText, queue: optionalText, name: optionalText })
  .refine((f) => f.ids !== undefined || f.queue !== undefined || f.name !== undefined, {
    message: 'needs a dead letter id, a queue or a name (an empty filter would take every dead letter)',
  })

const partitionForm = z.object({ partition: z.string().max(512) })

/** A partition's cap override: a whole number, or empty to clear it. */
const partitionCapForm = partitionForm.extend({
  cap: z.preprocess(
    (v) =>
      v === '' || v === undefined ? null : typeof v === 'string' && /^[0-9]{1,7}$/.test(v) ? Number(v) : v,
    z
      .number({ message: 'must be a whole number, or empty to clear the override' })
      .int()
      .min(0)
      .max(1_000_000)
      .nullable(),
  ),
})

const bulkForm = z
  .object({
    queue: optionalText,
    name: optionalText,
    state: z.preprocess((v) => (v === '' ? undefined : v), z.enum(BULK_STATES).optional()),
  })
  .refine((f) => f.queue !== undefined || f.name !== undefined || f.state !== undefined, {
    message: 'needs a queue, a name or a state (an empty filter would take every job)',
  })

const filterOf = (f: z.output<typeof bulkForm>) => ({
  ...(f.queue ? { queue: f.queue } : {}),
  ...(f.name ? { name: f.name } : {}),
  ...(f.state ? { state: f.state } : {}),
})

const letterFilter = (f: z.output<typeof deadLetterForm>) => ({
  ...(f.queue ? { queue: f.queue } : {}),
  ...(f.name ? { name: f.name } : {}),
})

const confirmForm = z.object({ confirm: z.literal('yes').optional() })

/**
 * The confirmation step of an action over many rows: what it will do, and the same form again
 * with `confirm=yes` (its filter fields kept), or a way back.
 */
function confirmStep(
  form: Record<string, string>,
  step: {
    title: string
    text: Html
    route: string
    fields: Record<string, string | undefined>
    button: string
    dataAction: string
    /** The page to go back to, under the dashboard. */
    keep: { path: string; label: string }
  },
): ActionResult {
  return {
    confirm: (view) => ({
      title: step.title,
      body: html`<p>${step.text}</p>
<div class="actions"><form method="post" action="${view.base}${step.route}" class="action"><input type="hidden" name="_csrf" value="${view.csrf}"><input type="hidden" name="back" value="${form.back ?? `${view.base}${step.keep.path}`}">${Object.entries(
        step.fields,
      ).flatMap(([name, value]) =>
        value === undefined ? [] : [html`<input type="hidden" name="${name}" value="${value}">`],
      )}<input type="hidden" name="confirm" value="yes"><button type="submit" data-action="${step.dataAction}" class="danger">${step.button}</button></form>
<a href="${view.base}${step.keep.path}">${step.keep.label}</a></div>`,
    }),
  }
}

/** "queue emails, state scheduled": a filter as the confirmation page names it. */
const filterText = (filter: Record<string, string | undefined>): string =>
  Object.entries(filter)
    .flatMap(([name, value]) => (value === undefined ? [] : [`${name} ${value}`]))
    .join(', ')

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
    async run(sluice, c, form, { budgetMs }) {
      const queue = param(c, 'name')
      if (parseForm(confirmForm, form).confirm === 'yes') {
        const purged = await inChunks(CHUNK, budgetMs, (limit) => sluice.purgeQueue(queue, { limit }))
        return { message: chunkedMessage(purged, 'waiting job', `purged from queue ${queue}`, 'purge again') }
      }
      const depth = (await sluice.inspect.queues()).find((q) => q.queue === queue)
      const waiting = depth ? depth.ready + depth.delayed + depth.blocked : 0
      return confirmStep(form, {
        title: `Purge queue ${queue}?`,
        text: html`This deletes the <strong>${plural(waiting, 'job')}</strong> waiting in queue <strong>${queue}</strong> (ready, scheduled, retrying and blocked), as cancelling each would. Running jobs and jobs in a batch stay. It cannot be undone.`,
        route: `/queues/${encodeURIComponent(queue)}/purge`,
        fields: {},
        button: `Purge ${plural(waiting, 'job')}`,
        dataAction: 'confirm-purge',
        keep: { path: '/queues', label: 'Keep them' },
      })
    },
  },
  {
    route: '/jobs/bulk-retry',
    async run(sluice, _c, form, { budgetMs }) {
      const filter = filterOf(parseForm(bulkForm, form))
      let after: string | undefined
      const done = await inChunks(CHUNK, budgetMs, async (limit) => {
        const ids = await sluice.retryJobs({ ...filter, limit, ...(after ? { after } : {}) })
        after = lastId(ids) ?? after
        return ids.length
      })
      return { message: chunkedMessage(done, 'job', 'made due now', 'retry again') }
    },
  },
  {
    route: '/jobs/bulk-cancel',
    async run(sluice, _c, form, { budgetMs }) {
      const filter = filterOf(parseForm(bulkForm, form))
      if (parseForm(confirmForm, form).confirm !== 'yes')
        return confirmStep(form, {
          title: 'Cancel every job matching this filter?',
          text: html`This cancels every waiting job matching <strong>${filterText(filter)}</strong>: they are deleted, as cancelling each would. Running jobs and jobs in a batch stay. It cannot be undone.`,
          route: '/jobs/bulk-cancel',
          fields: filter,
          button: 'Cancel them',
          dataAction: 'confirm-bulk-cancel',
          keep: { path: '/jobs', label: 'Keep them' },
        })
      const done = await inChunks(
        CHUNK,
        budgetMs,
        async (limit) => (await sluice.cancelJobs({ ...filter, limit })).length,
      )
      return { message: chunkedMessage(done, 'job', 'cancelled', 'cancel again') }
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
    async run(sluice, _c, form, { budgetMs }) {
      const f = parseForm(deadLetterForm, form)
      if (f.ids) {
        const { requeued, kept } = await sluice.deadLetters.retry(f.ids)
        return { message: retryMessage(requeued.length, kept) }
      }
      // By filter: chunks walking down the ids (the newest first), each starting below the last
      // one's lowest, so a dead letter kept (its key held) is never met twice.
      let before: string | undefined
      let requeued = 0
      const kept: KeptDeadLetter[] = []
      const done = await inChunks(CHUNK, budgetMs, async (limit) => {
        const r = await sluice.deadLetters.retry({ ...letterFilter(f), limit, ...(before ? { before } : {}) })
        const ids = [...r.requeued, ...r.kept.map((k) => k.id)]
        before = firstId(ids) ?? before
        requeued += r.requeued.length
        kept.push(...r.kept)
        return ids.length
      })
      const message = retryMessage(requeued, kept)
      return {
        message: done.more
          ? `${message} More remain: the time for one request ran out; retry again to go on.`
          : message,
      }
    },
  },
  {
    route: '/dead-letters/discard',
    async run(sluice, _c, form, { budgetMs }) {
      const f = parseForm(deadLetterForm, form)
      if (f.ids)
        return {
          message: `${plural((await sluice.deadLetters.discard(f.ids)).length, 'dead letter')} discarded.`,
        }
      if (parseForm(confirmForm, form).confirm !== 'yes')
        return confirmStep(form, {
          title: 'Discard every dead letter matching this filter?',
          text: html`This deletes every dead letter matching <strong>${filterText(letterFilter(f))}</strong>. It cannot be undone.`,
          route: '/dead-letters/discard',
          fields: letterFilter(f),
          button: 'Discard them',
          dataAction: 'confirm-discard',
          keep: { path: '/dead-letters', label: 'Keep them' },
        })
      const done = await inChunks(
        CHUNK,
        budgetMs,
        async (limit) => (await sluice.deadLetters.discard({ ...letterFilter(f), limit })).length,
      )
      return { message: chunkedMessage(done, 'dead letter', 'discarded', 'discard again') }
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
  {
    route: '/policies/:name/cap-partition',
    async run(sluice, c, form) {
      const { partition, cap } = parseForm(partitionCapForm, form)
      await sluice.setPartitionCap(param(c, 'name'), partition, cap)
      return {
        message:
          cap === null
            ? `Partition ${JSON.stringify(partition)} of ${param(c, 'name')} has no cap override.`
            : `Partition ${JSON.stringify(partition)} of ${param(c, 'name')} runs at most ${cap} at a time.`,
      }
    },
  },
]
