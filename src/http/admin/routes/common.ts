/** What every admin route shares: its security, the responses it may refuse with, and small helpers. */
import { quoted, SluiceError } from '../../../errors.js'
import type { Sluice } from '../../../sluice.js'
import * as s from '../schemas.js'

export const ADMIN = ['bearer'] as const
export const ok = { status: 200, body: { ok: true } }
export const refused = {
  400: { description: 'Invalid input', schema: s.errorBody },
  401: { description: 'Missing or invalid credentials', schema: s.errorBody },
}
export const mutationRefused = {
  ...refused,
  403: { description: 'The admin API is read-only (READ_ONLY)', schema: s.errorBody },
}
export const notFound = { 404: { description: 'Not found', schema: s.errorBody } }
export const conflict = {
  409: { description: 'The job is running (or not in a state for this)', schema: s.errorBody },
}
export const done = { 200: { description: 'Done', schema: s.okBody } }

/** The page's last id when the page is full: where the next one starts. */
export const cursorOf = (rows: readonly { id: string }[], limit: number): string | null =>
  rows.length === limit ? (rows[rows.length - 1]?.id ?? null) : null

/** `name` when a defined job uses that queue; UNKNOWN_QUEUE (404) otherwise. */
export function knownQueue(sluice: Sluice, name: string): string {
  if (!sluice.config.queues.includes(name))
    throw new SluiceError('UNKNOWN_QUEUE', `No job uses a queue named ${quoted(name)}.`)
  return name
}
