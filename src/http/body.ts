import type { Context } from 'hono'
import { ValidationError } from '../errors.js'
import { HttpError } from './errors.js'

/** Used by the auth middleware when it is installed on its own, outside createApp. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

// Keyed by HonoRequest, which outlives the replacement of its `raw` Request below.
const reads = new WeakMap<object, Promise<Uint8Array>>()

const tooLarge = (limit: number, bytes?: number): HttpError =>
  new HttpError(
    413,
    'PAYLOAD_TOO_LARGE',
    bytes === undefined
      ? `Request body exceeds the limit of ${limit} bytes.`
      : `Request body is ${bytes} bytes; the limit is ${limit} bytes.`,
  )

async function readLimited(c: Context, limit: number): Promise<Uint8Array> {
  const declared = c.req.header('content-length')
  if (declared !== undefined) {
    if (!/^\d{1,15}$/.test(declared.trim()))
      throw new ValidationError('Invalid Content-Length header.', [
        { path: ['content-length'], message: 'must be a non-negative integer' },
      ])
    const bytes = Number(declared.trim())
    if (bytes > limit) throw tooLarge(limit, bytes)
  }
  const stream = c.req.raw.body
  if (!stream) return new Uint8Array(0)
  // The header may be absent (chunked) or wrong: the bytes actually received are counted too.
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  // Later readers (c.req.json(), a handler after standalone auth middleware) see the same bytes.
  c.req.raw = new Request(c.req.raw, { body })
  return body
}

/**
 * Refuses, with 415 `UNSUPPORTED_MEDIA_TYPE`, a body sent compressed (a `Content-Encoding` other
 * than identity): it is never decompressed, and its bytes are not the JSON they stand for.
 */
export function assertIdentityEncoding(c: Context): void {
  const encoding = c.req.header('content-encoding')?.trim()
  if (encoding && encoding.toLowerCase() !== 'identity')
    throw new HttpError(
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      `The request body must not be compressed: Content-Encoding ${encoding.slice(0, 100)} is not supported ` +
        '(send it as plain JSON).',
    )
}

/**
 * The raw request body, read at most once per request and never beyond `limit` bytes:
 * a Content-Length above the limit is refused before reading, and a body that turns out
 * longer than its header (or has none) is cut off as soon as it passes the limit.
 */
export function readBody(c: Context, limit: number): Promise<Uint8Array> {
  let read = reads.get(c.req)
  if (!read) {
    try {
      assertIdentityEncoding(c)
    } catch (error) {
      return Promise.reject(error)
    }
    read = readLimited(c, limit)
    reads.set(c.req, read)
  }
  return read.then((body) => {
    if (body.byteLength > limit) throw tooLarge(limit, body.byteLength)
    return body
  })
}

const decoder = new TextDecoder('utf-8', { fatal: true })

/** The body parsed as JSON; an empty body is `emptyAs`. Bad UTF-8 or JSON is a 400 that says so. */
export async function readJson(c: Context, limit: number, emptyAs?: unknown): Promise<unknown> {
  const bytes = await readBody(c, limit)
  // jsonOnly lets a request without a Content-Type through when its headers announce no body (no
  // Content-Length, no Transfer-Encoding); one that carries a body all the same is refused here.
  if (bytes.byteLength > 0 && c.req.header('content-type') === undefined)
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as Content-Type: application/json.')
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    throw new ValidationError('Request body is not valid UTF-8.')
  }
  if (text.trim() === '') {
    if (emptyAs !== undefined) return emptyAs
    throw new ValidationError('Request body is empty; a JSON object is expected.')
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    const detail = error instanceof SyntaxError ? `: ${error.message}` : ''
    throw new ValidationError(`Request body is not valid JSON${detail}`, [
      { path: [], message: 'invalid JSON', code: 'invalid_json' },
    ])
  }
}
