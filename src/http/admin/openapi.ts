/**
 * The OpenAPI 3.1 document of the app, generated from the zod schemas its routes validate
 * with (z.toJSONSchema, JSON Schema 2020-12, which OpenAPI 3.1 uses as is).
 */
import * as z from 'zod'
import type { OperationSpec } from './operation.js'

type Json = Record<string, unknown>

/** Where the admin API is mounted in the app. */
export const ADMIN_PREFIX = '/api/v1'

function jsonSchema(schema: z.core.$ZodType, io: 'input' | 'output'): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json
  return rest
}

const openApiPath = (path: string): string => path.replace(/:([A-Za-z]+)/g, '{$1}')

function parameters(op: OperationSpec): Json[] {
  const out: Json[] = []
  for (const [where, schema] of [
    ['path', op.params],
    ['query', op.query],
  ] as const) {
    if (!schema) continue
    for (const [name, field] of Object.entries(schema.shape as Record<string, z.core.$ZodType>)) {
      const optional = z.safeParse(field, undefined).success
      const { description, ...fieldSchema } = jsonSchema(field, 'input')
      out.push({
        name,
        in: where,
        required: where === 'path' || !optional,
        ...(typeof description === 'string' ? { description } : {}),
        schema: fieldSchema,
      })
    }
  }
  return out
}

function operationObject(op: OperationSpec): Json {
  const params = parameters(op)
  return {
    operationId: `${op.method}${openApiPath(op.path)
      .replace(/[{}]/g, '')
      .replace(/[^A-Za-z0-9]+(.)?/g, (_, c?: string) => (c ?? '').toUpperCase())}`,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: op.tags,
    security: op.security.map((scheme) => ({ [scheme]: [] })),
    ...(params.length ? { parameters: params } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: jsonSchema(op.body, 'input'),
                ...(op.bodyExample === undefined ? {} : { example: op.bodyExample }),
              },
            },
          },
        }
      : {}),
    ...(op.mutation ? { 'x-mutation': true } : {}),
    responses: Object.fromEntries(
      Object.entries(op.responses).map(([status, response]) => [
        status,
        {
          description: response.description,
          ...(response.schema
            ? { content: { 'application/json': { schema: jsonSchema(response.schema, 'output') } } }
            : {}),
        },
      ]),
    ),
  }
}

/** The document for the app's routes (`core`, at the app's root) and the admin routes (under /api/v1). */
export function openApiDocument(core: readonly OperationSpec[], admin: readonly OperationSpec[]): Json {
  const paths: Record<string, Json> = {}
  const add = (prefix: string, op: OperationSpec): void => {
    const path = `${prefix}${openApiPath(op.path)}`
    paths[path] = { ...paths[path], [op.method]: operationObject(op) }
  }
  for (const op of core) add('', op)
  for (const op of admin) add(ADMIN_PREFIX, op)
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sluice HTTP API',
      version: '1',
      description:
        'Enqueue, publish, drain and maintain, and the admin API under /api/v1. Paths are relative to where the app is mounted. Every failure answers `{ error: { code, message, issues? } }`.',
    },
    tags: [
      { name: 'app', description: 'The routes producers, wake-ups and cron call' },
      { name: 'queues' },
      { name: 'jobs' },
      { name: 'dead letters' },
      { name: 'admission' },
      { name: 'status' },
    ],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A SLUICE_SECRET token.' },
        signature: {
          type: 'apiKey',
          in: 'header',
          name: 'Sluice-Signature',
          description:
            'v2=<hex HMAC-SHA256 of "<timestamp>\\n<METHOD>\\n<path>\\n<raw body>">, with the timestamp (unix ms) in Sluice-Timestamp.',
        },
        cron: {
          type: 'http',
          scheme: 'bearer',
          description: 'The CRON_SECRET (Vercel cron), /maintain only.',
        },
      },
    },
  }
}
