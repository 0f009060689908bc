/**
 * The events Lambda hands the HTTP handlers of `sluice/aws-lambda`: which are HTTP requests, what
 * the handlers answer the others, and the answers in Sluice's JSON error shape. hono/aws-lambda
 * logs a stack trace for an event it cannot turn into a fetch Request, and answers it with plain
 * text that bypasses the app's onError: so every field it reads is checked here first (see
 * readableEvent), and what still fails in it is turned into a JSON 400 (see httpHandler in
 * aws-lambda.ts). Lambda's own integrations never send such events: only a direct invocation can.
 */
import * as z from 'zod/mini'
import { type Issue, NotFoundError, type SluiceError, toIssues, ValidationError } from '../errors.js'
import { type ErrorBody, HttpError, statusOf } from '../http/errors.js'
import { jsonPath } from '../json.js'
import { ONCE } from '../validate.js'

/** What a Lambda HTTP integration (function URL, API Gateway v1/v2, ALB) takes back. */
export interface LambdaHttpResult {
  statusCode: number
  headers?: Record<string, string>
  multiValueHeaders?: Record<string, string[]>
  body: string
  isBase64Encoded: boolean
}

/** The HTTP integrations, told apart as hono/aws-lambda does (an ALB's first). */
export type HttpEventKind = 'alb' | 'v2' | 'lattice' | 'v1'

type EventObject = Record<string, unknown>

const isObject = (value: unknown): value is EventObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Which HTTP integration `event` comes from, or undefined for an event that is no HTTP request
 * (an EventBridge schedule, a direct invocation). An event with any of a kind's marks is of that
 * kind, whole or not, so a v2 event missing its requestContext is a malformed v2 event.
 */
export function httpEventKind(event: unknown): HttpEventKind | undefined {
  if (!isObject(event)) return undefined
  const context = isObject(event.requestContext) ? event.requestContext : undefined
  if (context && Object.hasOwn(context, 'elb')) return 'alb'
  if (
    Object.hasOwn(event, 'rawPath') ||
    (context && Object.hasOwn(context, 'http')) ||
    event.version === '2.0'
  )
    return 'v2'
  if (context && Object.hasOwn(context, 'serviceArn')) return 'lattice'
  if (
    Object.hasOwn(event, 'httpMethod') ||
    Object.hasOwn(event, 'path') ||
    Object.hasOwn(event, 'requestContext')
  )
    return 'v1'
  return undefined
}

// What atob accepts (forgiving base64), once ASCII whitespace is removed: the alphabet, then up
// to two `=` that make the length a multiple of four, or none and a length that is not 1 mod 4.
// One character class, no repeated group: a group repeated per quad recurses in V8's regexp
// engine and overflows its stack on a body of a few MB.
const BASE64_CHARS = /^[A-Za-z0-9+/]*(={0,2})$/
const BASE64_SPACE = /[\t\n\f\r ]/g

function isBase64(text: string): boolean {
  const padding = BASE64_CHARS.exec(text)?.[1]
  if (padding === undefined) return false
  return padding === '' ? text.length % 4 !== 1 : text.length % 4 === 0
}

const LAMBDA_KINDS = 'a function URL, API Gateway (payload 1.0 or 2.0) or an Application Load Balancer'

/** What the HTTP handlers answer for an event that is no HTTP request (a schedule, a direct invocation). */
export type NotHttp = (event: unknown) => SluiceError

export const notHttpEvent: NotHttp = (event) =>
  new ValidationError(
    `This function serves HTTP requests (${LAMBDA_KINDS}); the event is ${describeEvent(event)}.` +
      (isScheduled(event) ? ' Maintenance on a schedule runs in maintainHandler.' : ''),
  )

const describeEvent = (event: unknown): string =>
  isScheduled(event)
    ? 'an EventBridge event'
    : event === null
      ? 'null'
      : Array.isArray(event)
        ? 'an array'
        : isObject(event)
          ? 'not an HTTP request'
          : typeof event

/** An EventBridge (CloudWatch Events) event: a schedule's, typically. */
export const isScheduled = (event: unknown): boolean =>
  isObject(event) && typeof event.source === 'string' && typeof event['detail-type'] === 'string'

const methodOf = (event: EventObject, kind: HttpEventKind): string => {
  const context = isObject(event.requestContext) ? event.requestContext : {}
  const method =
    kind === 'v2'
      ? isObject(context.http)
        ? context.http.method
        : undefined
      : kind === 'lattice'
        ? event.method
        : event.httpMethod
  return typeof method === 'string' ? method.toUpperCase() : ''
}

/** Which of hono/aws-lambda's readers takes the event: the first whose marks it has, as hono tells them apart. */
function readerOf(event: EventObject, kind: HttpEventKind): HttpEventKind {
  const context = event.requestContext
  const has = (key: string) => isObject(context) && Object.hasOwn(context, key)
  if (has('elb')) return 'alb'
  if (Object.hasOwn(event, 'rawPath') && has('http')) return 'v2'
  if (has('serviceArn')) return 'lattice'
  // hono reads an event with some of v2's marks as v1: refused as the v2 event it is meant to be.
  return kind === 'v2' ? 'v2' : 'v1'
}

// What a fetch Request takes: a method is a token, and a header name one too; a header value has
// no NUL, CR or LF. hono percent-encodes a value with non-ASCII characters (and query strings),
// which an unpaired surrogate breaks; it passes cookies on as they are, so they are Latin-1.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const HEADER_TEXT = /^[^\0\r\n\p{Cs}]*$/u
const COOKIE_TEXT = /^[^\0\r\n\u0100-\uffff]*$/
const WELL_FORMED = /^\P{Cs}*$/u

function eventSchemas(): Record<HttpEventKind, z.ZodMiniType[]> {
  const text = (pattern: RegExp, message: string) => z.string().check(z.regex(pattern, message))
  const method = text(TOKEN, 'must be an HTTP method').check(
    z.refine((verb) => !/^(connect|trace|track)$/i.test(verb), 'is a method a fetch Request refuses'),
  )
  const path = text(/^\//, 'must be a path starting with /')
  const name = text(TOKEN, 'must be a header name')
  const value = text(HEADER_TEXT, 'must be a header value: no NUL, CR, LF or unpaired surrogate')
  const cookie = text(COOKIE_TEXT, 'must be a cookie: no NUL, CR, LF or character above U+00FF')
  const query = text(WELL_FORMED, 'must be text without an unpaired surrogate')
  const maybe = <T extends z.ZodMiniType>(schema: T) => z.optional(z.nullable(schema))
  const headers = maybe(z.record(name, z.nullable(value)))
  const multi = maybe(z.record(name, z.nullable(z.array(value))))
  const context = (shape: Record<string, z.ZodMiniType>) =>
    z.looseObject({ domainName: z.optional(z.string()), ...shape })
  const body = { body: maybe(z.string()), isBase64Encoded: maybe(z.boolean()) }
  const v1 = z.looseObject({
    path,
    httpMethod: method,
    headers,
    multiValueHeaders: multi,
    queryStringParameters: maybe(z.record(query, z.nullable(query))),
    multiValueQueryStringParameters: maybe(z.record(query, z.nullable(z.array(query)))),
    requestContext: maybe(context({})),
    ...body,
  })
  return {
    v1: [v1],
    // An ALB's cookie header is passed on as it is, besides its place among the headers.
    alb: [
      v1,
      z.looseObject({
        headers: maybe(z.looseObject({ cookie: maybe(cookie) })),
        multiValueHeaders: maybe(z.looseObject({ cookie: maybe(z.array(cookie)) })),
      }),
    ],
    v2: [
      z.looseObject({
        rawPath: path,
        rawQueryString: maybe(z.string()),
        cookies: maybe(z.array(cookie)),
        headers,
        requestContext: context({ http: z.looseObject({ method }) }),
        ...body,
      }),
    ],
    lattice: [z.looseObject({ path, method, headers: multi, requestContext: context({}), ...body })],
  }
}

let schemas: Record<HttpEventKind, z.ZodMiniType[]> | undefined

/** The host hono puts in the request's URL, and where it comes from: the domain name, else the Host header. */
function hostOf(event: EventObject): [unknown, (string | number)[]] {
  const context = isObject(event.requestContext) ? event.requestContext : {}
  if ('domainName' in context) return [context.domainName, ['requestContext', 'domainName']]
  const first = (value: unknown) => (Array.isArray(value) ? value[0] : value)
  const header = isObject(event.headers) ? first(event.headers.host) : undefined
  if (header) return [header, ['headers', 'host']]
  return [
    isObject(event.multiValueHeaders) ? first(event.multiValueHeaders.host) : undefined,
    ['multiValueHeaders', 'host'],
  ]
}

/** An event hono cannot read, naming the field: `Invalid Lambda event at event.headers.host: …`. */
const unreadableAt = (path: (string | number)[], message: string, issues: Issue[]): ValidationError =>
  new ValidationError(
    `Invalid Lambda event at ${jsonPath('event', path)}: ${message}; it cannot be read as an HTTP request.`,
    issues,
  )

/**
 * Why hono/aws-lambda could not read `event` (of `kind`) as a fetch Request, as a ValidationError
 * naming the field; undefined when it can.
 */
function unreadableEvent(event: EventObject, kind: HttpEventKind): ValidationError | undefined {
  schemas ??= eventSchemas()
  for (const schema of schemas[readerOf(event, kind)]) {
    const checked = z.safeParse(schema, event, ONCE)
    if (checked.success) continue
    const issues = toIssues(checked.error.issues)
    return unreadableAt(issues[0]!.path, issues[0]!.message, issues)
  }
  const [host, at] = hostOf(event)
  if (URL.canParse(`https://${host}/`)) return undefined
  return unreadableAt(at, 'must be a host name', [{ path: at, message: 'must be a host name' }])
}

/**
 * The event as hono/aws-lambda may be given it, or the error to answer instead: an event that is
 * no HTTP request, or one with a field hono cannot read. A GET or HEAD loses its body (function
 * URLs forward one; a fetch Request may not carry it); everything else passes unchanged.
 */
export function checkHttpEvent(
  event: unknown,
  notHttp: NotHttp = notHttpEvent,
): { event: object } | { error: SluiceError } {
  const kind = httpEventKind(event)
  if (!kind || !isObject(event)) return { error: notHttp(event) }
  const unreadable = unreadableEvent(event, kind)
  if (unreadable) return { error: unreadable }
  const body = event.body
  if (typeof body !== 'string' || body === '') return { event }
  const verb = methodOf(event, kind)
  if (verb === 'GET' || verb === 'HEAD') return { event: { ...event, body: null } }
  if (event.isBase64Encoded === true && !isBase64(body.replace(BASE64_SPACE, '')))
    return {
      error: new ValidationError(
        'Invalid Lambda event at event.body: isBase64Encoded is true but the body is not base64.',
        [{ path: ['body'], message: 'is not base64' }],
      ),
    }
  return { event }
}

/** The error as a Lambda HTTP result in Sluice's JSON shape, with headers as the event's integration takes them. */
export async function errorResult(event: unknown, error: SluiceError | HttpError): Promise<LambdaHttpResult> {
  const response =
    error instanceof HttpError
      ? error.getResponse()
      : Response.json({ error: error.toJSON() } satisfies ErrorBody, { status: statusOf(error) })
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  const base = { statusCode: response.status, body: await response.text(), isBase64Encoded: false }
  return isObject(event) && 'multiValueHeaders' in event && event.multiValueHeaders
    ? { ...base, multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])) }
    : { ...base, headers }
}

/** What maintainHandler answers an HTTP request: it runs on a schedule, and nothing ran. */
export const maintainOverHttp = (): NotFoundError =>
  new NotFoundError(
    'This function runs Sluice maintenance on an EventBridge schedule and serves no HTTP requests; ' +
      'nothing ran. Over HTTP, maintenance is POST /maintain on the api function (apiHandler), with credentials.',
  )

/** A batch from an event source mapping or a notification: SQS, S3, SNS, DynamoDB or Kinesis `Records`. */
export const isSourceBatch = (event: unknown): event is { Records: unknown[] } =>
  isObject(event) && Array.isArray(event.Records)

/**
 * What maintainHandler throws for a batch of records: a trigger that is not its schedule. Thrown,
 * not answered, so that the invocation fails where its source shows it (SQS keeps the messages)
 * instead of running maintenance for every message or file.
 */
export const maintainOnRecords = (event: { Records: unknown[] }): ValidationError => {
  const first = event.Records[0]
  const source = isObject(first)
    ? (first.eventSource ?? first.EventSource ?? 'an event source')
    : 'an event source'
  return new ValidationError(
    `This function runs Sluice maintenance on an EventBridge schedule; the event is a batch of records from ${String(source)}, and nothing ran. Remove that trigger from the maintenance function.`,
  )
}

/** What drainHandler answers an event that is no HTTP request. */
export const drainNotHttp: NotHttp = (event) =>
  new ValidationError(
    'The drain function takes an HTTP POST (its function URL, or an API Gateway route) with credentials; ' +
      `the event is ${describeEvent(event)}. ` +
      'Maintenance on a schedule runs in maintainHandler.',
  )
