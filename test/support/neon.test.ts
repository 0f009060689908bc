import { randomUUID } from 'node:crypto'
import {
  Client,
  DatabaseError,
  NeonDbError,
  type NeonQueryFunction,
  neon,
  neonConfig,
  type Pool,
} from '@neondatabase/serverless'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, inject, test } from 'vitest'
import { configureNeonHttpForLocal, type NeonHttpServer, startNeonHttpServer } from './neon-http-server.js'
import { configureNeonForLocal, localNeonPool, startWsProxy, type WsProxy } from './ws-proxy.js'

const url = inject('databaseUrl')
const schema = `neon_support_${randomUUID().slice(0, 8)}`

let admin: pg.Pool
let proxy: WsProxy
let http: NeonHttpServer
let pool: Pool
let sql: NeonQueryFunction<false, true>

beforeAll(async () => {
  admin = new pg.Pool({ connectionString: url, max: 2 })
  await admin.query(`CREATE SCHEMA ${schema}`)
  const { hostname, port } = new URL(url)
  proxy = await startWsProxy({ host: hostname, port: Number(port || 5432) })
  http = await startNeonHttpServer()
  configureNeonHttpForLocal(neonConfig, http.port)
  pool = localNeonPool({ connectionString: url, max: 4 }, proxy.port)
  sql = neon(url, { fullResults: true })
})

afterAll(async () => {
  await pool?.end()
  await http?.close()
  await proxy?.close()
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await admin?.end()
})

const tables: string[] = []

/** Creates a table unique to the calling test; it is dropped after the test. */
async function freshTable(columns: string): Promise<string> {
  const name = `${schema}.t_${randomUUID().slice(0, 8)}`
  await admin.query(`CREATE TABLE ${name} (${columns})`)
  tables.push(name)
  return name
}

afterEach(async () => {
  for (const name of tables.splice(0)) await admin.query(`DROP TABLE IF EXISTS ${name}`)
})

async function count(table: string): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)
  return rows[0]?.n ?? -1
}

type Row = Record<string, unknown>
type Result = { rows: Row[]; rowCount: number | null; command: string }

/** What the shared tests need from each of the driver's two paths. */
interface Path {
  query(text: string, params?: unknown[]): Promise<Result>
  /** Runs the statements in one transaction. */
  batch(statements: [string, unknown[]][]): Promise<Result[]>
  errorClass: new (...args: never[]) => Error
}

const httpPath: Path = {
  query: (text, params) => sql.query(text, params),
  batch: (statements) => sql.transaction(statements.map(([text, params]) => sql.query(text, params))),
  errorClass: NeonDbError,
}

const wsPath: Path = {
  query: (text, params) => pool.query(text, params),
  async batch(statements) {
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      const results: Result[] = []
      for (const [text, params] of statements) results.push(await client.query(text, params))
      await client.query('COMMIT')
      return results
    } catch (err) {
      await client.query('ROLLBACK')
      throw err
    } finally {
      client.release()
    }
  },
  errorClass: DatabaseError,
}

describe.each([
  ['HTTP (neon())', httpPath],
  ['WebSocket (Pool)', wsPath],
])('%s against local PostgreSQL', (_name, path) => {
  test('sends parameters of several types', async () => {
    const doc = { a: 1, nested: { b: [1, 'x', null], ok: true }, s: 'quote " and \\ backslash' }
    const { rows } = await path.query(
      `SELECT $1::text AS t, $2::int AS i, $3::bigint AS b, $4::boolean AS flag, $5::text AS nothing,
              $6::jsonb AS doc, $7::text[] AS tags, $8::bigint[] AS ids, $9::bigint AS big`,
      [
        'héllo, wörld',
        42,
        '9007199254740993',
        true,
        null,
        doc,
        ['a', 'b,c', '"q"', null],
        ['1', '-2'],
        2n ** 62n,
      ],
    )
    expect(rows).toEqual([
      {
        t: 'héllo, wörld',
        i: 42,
        b: '9007199254740993',
        flag: true,
        nothing: null,
        doc,
        tags: ['a', 'b,c', '"q"', null],
        ids: ['1', '-2'],
        big: '4611686018427387904',
      },
    ])
  })

  test('parses result types', async () => {
    const table = await freshTable(`
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(), n int4, big int8, at timestamptz,
      doc jsonb, flag bool, tags text[], nums int4[], note text`)
    const at = new Date('2024-02-29T12:34:56.789Z')
    await path.query(
      `INSERT INTO ${table} (n, big, at, doc, flag, tags, nums, note) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [7, '9223372036854775807', at, { k: ['v'] }, false, ['x', 'y'], [1, 2, 3], null],
    )
    const { rows } = await path.query(`SELECT * FROM ${table}`)
    expect(rows).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        n: 7,
        big: '9223372036854775807',
        at,
        doc: { k: ['v'] },
        flag: false,
        tags: ['x', 'y'],
        nums: [1, 2, 3],
        note: null,
      },
    ])
    expect(rows[0]?.at).toBeInstanceOf(Date)
  })

  test('reports rowCount and command for UPDATE', async () => {
    const table = await freshTable('id int PRIMARY KEY, state text NOT NULL')
    await path.query(`INSERT INTO ${table} SELECT g, 'queued' FROM generate_series(1, 3) g`)
    const result = await path.query(`UPDATE ${table} SET state = $1 WHERE id > $2`, ['running', 1])
    expect(result).toMatchObject({ command: 'UPDATE', rowCount: 2 })
  })

  test('surfaces a unique violation with its SQLSTATE', async () => {
    const table = await freshTable('id int PRIMARY KEY')
    await path.query(`INSERT INTO ${table} VALUES ($1)`, [1])
    const failure = path.query(`INSERT INTO ${table} VALUES ($1)`, [1])
    await expect(failure).rejects.toBeInstanceOf(path.errorClass)
    await expect(failure).rejects.toMatchObject({
      code: '23505',
      constraint: expect.stringContaining('pkey'),
      detail: 'Key (id)=(1) already exists.',
    })
  })

  test('runs a batch in one transaction that writes nothing when it fails halfway', async () => {
    const table = await freshTable('id int PRIMARY KEY')
    const insert = `INSERT INTO ${table} VALUES ($1)`
    await expect(
      path.batch([
        [insert, [1]],
        [insert, [2]],
        [insert, [1]],
        [insert, [3]],
      ]),
    ).rejects.toMatchObject({ code: '23505' })
    expect(await count(table)).toBe(0)

    const results = await path.batch([
      [insert, [1]],
      [`SELECT count(*)::int AS n FROM ${table}`, []],
    ])
    expect(results.map((r) => r.rows)).toEqual([[], [{ n: 1 }]])
    expect(await count(table)).toBe(1)
  })
})

describe('HTTP path details', () => {
  test('returns node-postgres-shaped full results', async () => {
    const result = await sql.query('SELECT $1::int AS a, $2::text AS b', [1, 'x'])
    expect(result).toMatchObject({
      command: 'SELECT',
      rowCount: 1,
      rowAsArray: false,
      rows: [{ a: 1, b: 'x' }],
      fields: [
        { name: 'a', dataTypeID: 23 },
        { name: 'b', dataTypeID: 25 },
      ],
    })
  })

  test('honours arrayMode and tagged templates', async () => {
    const arrays = await sql.query('SELECT 1 AS a, NULL::int AS b', [], { arrayMode: true })
    expect(arrays.rows).toEqual([[1, null]])
    const n = 5
    const templated = await sql`SELECT ${n}::int * 2 AS doubled`
    expect(templated.rows).toEqual([{ doubled: 10 }])
  })

  test('applies transaction options', async () => {
    const [level] = await sql.transaction([sql.query('SHOW transaction_isolation')], {
      isolationLevel: 'Serializable',
    })
    expect(level?.rows).toEqual([{ transaction_isolation: 'serializable' }])

    const table = await freshTable('id int')
    await expect(
      sql.transaction([sql.query(`INSERT INTO ${table} VALUES (1)`)], { readOnly: true }),
    ).rejects.toMatchObject({ code: '25006' })
  })

  test('rejects several statements in one query, as Neon does', async () => {
    await expect(sql.query('SELECT 1; SELECT 2')).rejects.toMatchObject({ code: '42601' })
  })
})

describe('WebSocket path details', () => {
  test('runs interactive transactions on a pooled client', async () => {
    const table = await freshTable('id int PRIMARY KEY, payload jsonb')
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      await client.query(`INSERT INTO ${table} VALUES ($1, $2)`, [1, { step: 1 }])
      const inside = await client.query(`SELECT payload FROM ${table}`)
      expect(inside.rows).toEqual([{ payload: { step: 1 } }])
      await client.query('ROLLBACK')
      expect(await count(table)).toBe(0)

      await client.query('BEGIN')
      await client.query(`INSERT INTO ${table} VALUES ($1, $2)`, [2, { step: 2 }])
      expect(await count(table)).toBe(0)
      await client.query('COMMIT')
      expect(await count(table)).toBe(1)
    } finally {
      client.release()
    }
  })

  test('configures a single Client', async () => {
    const client = new Client(url)
    configureNeonForLocal(client.neonConfig, proxy.port)
    await client.connect()
    try {
      const { rows } = await client.query('SELECT current_setting($1) AS name', ['application_name'])
      expect(rows).toEqual([{ name: expect.stringContaining('neondatabase/serverless') }])
    } finally {
      await client.end()
    }
  })
})
