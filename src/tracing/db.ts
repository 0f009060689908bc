import { sqlStateOf } from '../db/errors.js'
import type { Db, Queryable, QueryResult, Statement } from '../db/types.js'
import { MAX_QUERY_TEXT, type Tracing } from './otel.js'

const OPERATIONS = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE'])
const FIRST_WORD = /^\s*([A-Za-z]+)/
/** The first name in Sluice's (quoted) schema: the table or function the statement is about. */
const TARGET = /"[^"]+"\.([A-Za-z_][\w$]*)/

/**
 * The span name and attributes of a statement (database semantic conventions): the query text
 * with its `$n` placeholders (never the values), cut to MAX_QUERY_TEXT characters, and the
 * operation where the text says it.
 */
export function describeStatement(text: string): { name: string; attributes: Record<string, string> } {
  const word = FIRST_WORD.exec(text)?.[1]?.toUpperCase()
  const operation = word !== undefined && OPERATIONS.has(word) ? word : undefined
  const target = TARGET.exec(text)?.[1]
  const summary = [operation ?? word, target].filter(Boolean).join(' ') || 'postgresql'
  const attributes: Record<string, string> = {
    'db.system': 'postgresql',
    'db.system.name': 'postgresql',
    'db.query.text': text.length > MAX_QUERY_TEXT ? text.slice(0, MAX_QUERY_TEXT) : text,
    'db.query.summary': summary,
  }
  if (operation) attributes['db.operation.name'] = operation
  return { name: summary, attributes }
}

function traced<R>(
  tracing: Tracing,
  statement: Statement,
  run: () => Promise<QueryResult<R>>,
): Promise<QueryResult<R>> {
  const tracer = tracing.tracer()
  if (tracer === undefined) return run()
  const parent = tracing.active()
  // A statement outside any trace (a health check, an inspect call) starts none of its own.
  if (!tracing.hasActiveSpan(parent)) return run()
  const { name, attributes } = describeStatement(statement.text)
  const span = tracer.startSpan(name, { kind: tracing.kind.CLIENT, attributes }, parent)
  return tracing.within(span, parent, run).then(
    (result) => {
      span.setAttribute('db.response.returned_rows', result.rowCount)
      span.end()
      return result
    },
    (error: unknown) => {
      tracing.fail(span, error)
      const code = sqlStateOf(error)
      if (code !== undefined) span.setAttribute('db.response.status_code', code)
      span.end()
      throw error
    },
  )
}

function tracedQueryable(queryable: Queryable, tracing: Tracing): Queryable {
  return { query: (statement) => traced(tracing, statement, () => queryable.query(statement)) }
}

/**
 * Wraps a Db so that each statement sent inside a traced operation gets a client span. Applied
 * only when `@opentelemetry/api` is installed and statement spans are on; each statement then
 * checks for a tracer (and an active span) before doing anything else.
 */
export function traceDb(db: Db, tracing: Tracing): Db {
  if (tracing.api === undefined || !tracing.statements) return db
  return {
    ...db,
    kind: db.kind,
    interactiveTransactions: db.interactiveTransactions,
    query: (statement) => traced(tracing, statement, () => db.query(statement)),
    batch(statements) {
      const tracer = tracing.tracer()
      const parent = tracer === undefined ? undefined : tracing.active()
      if (tracer === undefined || parent === undefined || !tracing.hasActiveSpan(parent))
        return db.batch(statements)
      const span = tracer.startSpan(
        'BATCH',
        {
          kind: tracing.kind.CLIENT,
          attributes: {
            'db.system': 'postgresql',
            'db.system.name': 'postgresql',
            'db.operation.name': 'BATCH',
            'db.operation.batch.size': statements.length,
          },
        },
        parent,
      )
      return tracing
        .within(span, parent, () => db.batch(statements))
        .then(
          (results) => {
            span.end()
            return results
          },
          (error: unknown) => {
            tracing.fail(span, error)
            span.end()
            throw error
          },
        )
    },
    transaction: (fn) => db.transaction((tx) => fn(tracedQueryable(tx, tracing))),
    close: () => db.close(),
  }
}
