import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { NeonConfig } from '@neondatabase/serverless'
import pg from 'pg'

export interface NeonHttpServer {
  port: number
  /** The endpoint to give the driver as `neonConfig.fetchEndpoint`. */
  url: string
  close(): Promise<void>
}

interface HttpQuery {
  query: string
  params: unknown[]
}

/**
 * Every value comes back as the text Postgres sent, so the driver's own type
 * parsers run. (The driver always asks for this with `Neon-Raw-Text-Output`.)
 */
const rawText: pg.CustomTypesConfig = { getTypeParser: () => (value: string) => value }

const isolationLevels: Record<string, string> = {
  ReadUncommitted: 'READ UNCOMMITTED',
  ReadCommitted: 'READ COMMITTED',
  RepeatableRead: 'REPEATABLE READ',
  Serializable: 'SERIALIZABLE',
}

/** The `NeonDbError` fields the driver copies from a 400 response body. */
const errorFields = [
  'severity',
  'code',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
] as const

class BadRequest extends Error {}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function toHttpQuery(value: unknown): HttpQuery {
  if (!isRecord(value) || typeof value.query !== 'string') throw new BadRequest('expected {query, params}')
  const params = value.params ?? []
  if (!Array.isArray(params)) throw new BadRequest('params must be an array')
  return { query: value.query, params }
}

function parseBody(body: unknown): HttpQuery | HttpQuery[] {
  if (isRecord(body) && Array.isArray(body.queries)) return body.queries.map(toHttpQuery)
  return toHttpQuery(body)
}

/** `BEGIN` with the batch options the driver sends as `Neon-Batch-*` headers. */
function beginStatement(req: IncomingMessage): string {
  const parts = ['BEGIN']
  const isolation = req.headers['neon-batch-isolation-level']
  if (typeof isolation === 'string') {
    const level = isolationLevels[isolation]
    if (!level) throw new BadRequest(`unknown isolation level: ${isolation}`)
    parts.push(`ISOLATION LEVEL ${level}`)
  }
  const readOnly = req.headers['neon-batch-read-only']
  if (readOnly !== undefined) parts.push(readOnly === 'true' ? 'READ ONLY' : 'READ WRITE')
  const deferrable = req.headers['neon-batch-deferrable']
  if (deferrable !== undefined) parts.push(deferrable === 'true' ? 'DEFERRABLE' : 'NOT DEFERRABLE')
  return parts.join(' ')
}

async function run(client: pg.Pool | pg.PoolClient, { query, params }: HttpQuery, arrayMode: boolean) {
  // Extended protocol even without parameters: like Neon, one statement per query.
  const config: pg.QueryArrayConfig & { queryMode: 'extended' } = {
    text: query,
    values: params,
    rowMode: 'array',
    types: rawText,
    queryMode: 'extended',
  }
  const result = await client.query(config)
  const fields = result.fields.map((f) => ({
    name: f.name,
    tableID: f.tableID,
    columnID: f.columnID,
    dataTypeID: f.dataTypeID,
    dataTypeSize: f.dataTypeSize,
    dataTypeModifier: f.dataTypeModifier,
    format: f.format,
  }))
  const rows = arrayMode
    ? result.rows
    : result.rows.map((row) => Object.fromEntries(fields.map((f, i) => [f.name, row[i]])))
  return { command: result.command, rowCount: result.rowCount, rows, fields, rowAsArray: arrayMode }
}

async function runBatch(pool: pg.Pool, queries: HttpQuery[], begin: string, arrayMode: boolean) {
  const client = await pool.connect()
  try {
    await client.query(begin)
    const results = []
    for (const query of queries) results.push(await run(client, query, arrayMode))
    await client.query('COMMIT')
    client.release()
    return { results }
  } catch (err) {
    await client.query('ROLLBACK').then(
      () => client.release(),
      (rollbackErr: Error) => client.release(rollbackErr),
    )
    throw err
  }
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('error', reject)
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')))
      } catch {
        reject(new BadRequest('body is not JSON'))
      }
    })
  })
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

/** The JSON body of a 400 response, from which the driver builds a `NeonDbError`. */
function errorBody(err: Error): Record<string, unknown> {
  const body: Record<string, unknown> = { message: err.message }
  for (const key of errorFields) {
    const value: unknown = Reflect.get(err, key)
    if (value !== undefined) body[key] = value
  }
  return body
}

/**
 * A local stand-in for Neon's "SQL over HTTP" endpoint, executing each request
 * with `pg` against the connection string in the `Neon-Connection-String`
 * header (or `opts.connectionString` when given, which then wins).
 */
export async function startNeonHttpServer(opts: { connectionString?: string } = {}): Promise<NeonHttpServer> {
  const pools = new Map<string, pg.Pool>()
  const poolFor = (connectionString: string) => {
    let pool = pools.get(connectionString)
    if (!pool) {
      pool = new pg.Pool({ connectionString, max: 4 })
      pool.on('error', () => {})
      pools.set(connectionString, pool)
    }
    return pool
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST' || req.url !== '/sql') return send(res, 404, { message: 'not found' })
    try {
      const header = req.headers['neon-connection-string']
      const connectionString = opts.connectionString ?? (typeof header === 'string' ? header : undefined)
      if (!connectionString) throw new BadRequest('missing Neon-Connection-String header')
      const arrayMode = req.headers['neon-array-mode'] === 'true'
      const body = parseBody(await readJson(req))
      const pool = poolFor(connectionString)
      const result = Array.isArray(body)
        ? await runBatch(pool, body, beginStatement(req), arrayMode)
        : await run(pool, body, arrayMode)
      send(res, 200, result)
    } catch (err) {
      if (err instanceof BadRequest || err instanceof pg.DatabaseError) return send(res, 400, errorBody(err))
      res.writeHead(500, { 'content-type': 'text/plain' })
      res.end(err instanceof Error ? err.message : String(err))
    }
  }

  const server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const { port } = server.address() as AddressInfo
  return {
    port,
    url: `http://127.0.0.1:${port}/sql`,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())))
      await Promise.all([...pools.values()].map((pool) => pool.end()))
    },
  }
}

/** Sends the driver's HTTP queries (`neon()`) to the local server. `fetchEndpoint` is global-only. */
export function configureNeonHttpForLocal(config: Pick<NeonConfig, 'fetchEndpoint'>, port: number): void {
  config.fetchEndpoint = `http://127.0.0.1:${port}/sql`
}

/**
 * For a worker's outbound fetches under workerd: passes Neon's SQL-over-HTTP requests (`/sql`)
 * on to the local endpoint at `url` and answers anything else with a 502.
 */
export async function forwardNeonSql(
  request: { url: string; headers: Iterable<[string, string]>; arrayBuffer(): Promise<ArrayBuffer> },
  url: string,
): Promise<Response> {
  if (new URL(request.url).pathname !== '/sql')
    return new Response('unexpected outbound request', { status: 502 })
  const headers = new Headers([...request.headers])
  headers.delete('host')
  const answer = await fetch(url, { method: 'POST', headers, body: await request.arrayBuffer() })
  return new Response(await answer.arrayBuffer(), { status: answer.status, headers: answer.headers })
}
