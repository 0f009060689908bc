/**
 * Every action of the dashboard: a POST route under the dashboard with the form fields it
 * takes (zod), what it does through the controls, and the message the operator sees after.
 * The app checks session, CSRF token and read-only mode before any of them runs.
 */
import type { Context } from 'hono'
import * as z from 'zod'
import type { Sluice } from '../../sluice.js'
import { optionalText, parseForm } from './form.js'

export interface ActionResult {
  /** The flash message after the redirect. */
  message: string
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

const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`

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
    route: '/dead-letters/retry',
    async run(sluice, _c, form) {
      const f = parseForm(deadLetterForm, form)
      const ids = await sluice.deadLetters.retry(
        f.ids ? f.ids : { ...(f.queue ? { queue: f.queue } : {}), ...(f.name ? { name: f.name } : {}) },
      )
      return { message: `${plural(ids.length, 'dead letter')} put back in their queue.` }
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
