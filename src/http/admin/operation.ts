/**
 * An admin route as data: method, path, the zod schemas of its parameters, query, body and
 * answers, and its handler. The admin app mounts them and the OpenAPI document describes
 * them, both from the same list.
 */
import type { Context } from 'hono'
import * as z from 'zod'
import { toIssues, ValidationError } from '../../errors.js'
import { jsonPath } from '../../json.js'

export type Method = 'get' | 'post' | 'put'

export interface ResponseSpec {
  description: string
  schema?: z.core.$ZodType
}

/** What every operation declares, whether the admin app serves it or another route does. */
export interface OperationSpec {
  method: Method
  /** Hono-style, parameters as `:name`. */
  path: string
  summary: string
  description?: string
  tags: string[]
  /** Changes state: refused in read-only mode. */
  mutation?: boolean
  /** Which credentials it takes (a security scheme of the document). */
  security: readonly string[]
  params?: z.ZodObject
  query?: z.ZodObject
  body?: z.core.$ZodType
  /** A valid body, shown in the document. */
  bodyExample?: unknown
  responses: Record<number, ResponseSpec>
}

export interface Reply {
  status: number
  body: unknown
}

export interface Operation extends OperationSpec {
  handle(input: { params: unknown; query: unknown; body: unknown }, c: Context): Promise<Reply>
}

/** Declares an operation with its handler typed from its schemas. */
export function operation<
  P extends z.ZodObject = z.ZodObject<Record<string, never>>,
  Q extends z.ZodObject = z.ZodObject<Record<string, never>>,
  B extends z.core.$ZodType = z.ZodUndefined,
>(
  spec: Omit<OperationSpec, 'params' | 'query' | 'body'> & {
    params?: P
    query?: Q
    body?: B
    handle(input: { params: z.output<P>; query: z.output<Q>; body: z.output<B> }, c: Context): Promise<Reply>
  },
): Operation {
  return spec as unknown as Operation
}

/** Parses one part of a request; a failure is a 400 naming where and what. */
export function parsePart<T>(schema: z.core.$ZodType<T>, value: unknown, part: string): T {
  const parsed = z.safeParse(schema, value)
  if (parsed.success) return parsed.data
  const issues = toIssues(parsed.error.issues)
  const path = issues[0]?.path ?? []
  const where = path.length ? ` at ${jsonPath('', path)}` : ''
  throw new ValidationError(`Invalid ${part}${where}: ${issues[0]?.message}`, issues)
}
