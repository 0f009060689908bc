import * as z from 'zod'

type JsonSchema = {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  enum?: unknown[]
  const?: unknown
  format?: string
  minimum?: number
  maximum?: number
}

function shape(s: JsonSchema | undefined, depth: number): string {
  if (!s || typeof s !== 'object') return 'any'
  const union = s.anyOf ?? s.oneOf
  if (union) return union.map((x) => shape(x, depth)).join(' | ')
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ')
  if ('const' in s) return JSON.stringify(s.const)
  if (Array.isArray(s.type)) return s.type.join(' | ')
  switch (s.type) {
    case 'object': {
      if (depth > 3) return 'object'
      const required = new Set(s.required ?? [])
      const fields = Object.entries(s.properties ?? {}).map(
        ([key, value]) => `${key}${required.has(key) ? '' : '?'}: ${shape(value, depth + 1)}`,
      )
      return fields.length ? `{ ${fields.join(', ')} }` : '{}'
    }
    case 'array':
      return `${shape(s.items, depth + 1)}[]`
    case 'string':
      return s.format ? `string (${s.format})` : 'string'
    case 'integer':
    case 'number': {
      const range = s.minimum !== undefined && s.maximum !== undefined ? ` ${s.minimum}..${s.maximum}` : ''
      return `${s.type}${range}`
    }
    default:
      return s.type ?? 'any'
  }
}

/** A job's input schema in one line, e.g. `{ userId: string, email: string (email), name?: string }`. */
export function describeInput(schema: unknown): string | undefined {
  try {
    return shape(
      z.toJSONSchema(schema as z.ZodType, { unrepresentable: 'any', io: 'input' }) as JsonSchema,
      0,
    )
  } catch {
    return undefined
  }
}
