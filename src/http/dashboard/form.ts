import type { Context } from 'hono'
import * as z from 'zod'
import { toIssues, ValidationError } from '../../errors.js'
import { readBody } from '../body.js'
import { HttpError } from '../errors.js'

/** Forms carry a few short fields; nothing larger is read. */
const MAX_FORM_BYTES = 16 * 1024

const decoder = new TextDecoder('utf-8', { fatal: true })

/** The fields of an HTML form POST (`application/x-www-form-urlencoded`), last value of each. */
export async function readForm(c: Context): Promise<Record<string, string>> {
  const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase()
  if (type !== undefined && type !== 'application/x-www-form-urlencoded')
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the form as application/x-www-form-urlencoded.')
  let text: string
  try {
    text = decoder.decode(await readBody(c, MAX_FORM_BYTES))
  } catch (error) {
    if (error instanceof TypeError) throw new ValidationError('The form is not valid UTF-8.')
    throw error
  }
  return Object.fromEntries(new URLSearchParams(text))
}

/** The form's fields through `schema`; a 400 that names the field otherwise. */
export function parseForm<T>(schema: z.ZodType<T>, fields: Record<string, string>): T {
  const parsed = schema.safeParse(fields)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  throw new ValidationError(
    `Invalid form: ${issue?.path.join('.') || '(form)'} ${issue?.message}`,
    toIssues(parsed.error.issues),
  )
}

export const optionalText = z.preprocess((v) => (v === '' ? undefined : v), z.string().max(512).optional())

/** A page's query string through `schema`; a 400 that names the parameter otherwise. */
export function parseQuery<T>(schema: z.ZodType<T>, query: Record<string, string>): T {
  const parsed = schema.safeParse(query)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  throw new ValidationError(
    `Invalid query: ${issue?.path.join('.') || '(query)'} ${issue?.message}`,
    toIssues(parsed.error.issues),
  )
}
