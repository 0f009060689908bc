import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { afterAll, expect, test } from 'vitest'
import { latestVersion } from '../../src/migrate/run.js'
import { cliEnv, repo, runCli, tsxLoader, Watched } from '../helpers/cli.js'

// `npm start` end to end: the dev command on embedded PGlite in a temporary directory.
const dataDir = await mkdtemp(join(tmpdir(), 'sluice-dev-'))
const running: Watched[] = []

afterAll(async () => {
  for (const w of running) w.child.kill('SIGKILL')
  await rm(dataDir, { recursive: true, force: true })
})

/** The start script's command (`tsx src/cli/main.ts dev --config …`), with a free port and the temp directory. */
function startDev(): Watched {
  const script = (
    JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start
  const [runner, ...args] = script.split(/\s+/)
  expect(runner).toBe('tsx')
  const child = spawn(process.execPath, ['--import', tsxLoader, ...args, '--data-dir', dataDir], {
    cwd: repo,
    env: cliEnv({ PORT: '0' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const watched = new Watched(child)
  running.push(watched)
  return watched
}

const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir])

async function enqueue(base: string, job: string, input: unknown): Promise<string> {
  const res = await fetch(`${base}/jobs/${job}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input }),
  })
  expect(res.status).toBe(202)
  return ((await res.json()) as { id: string }).id
}

test('npm start: serves, drains on enqueue, lets other commands through, stops cleanly, keeps its data', async () => {
  const dev = startDev()
  const [, port] = await dev.waitFor(/http +http:\/\/localhost:(\d+)/, 90_000)
  expect(dev.output).toContain('authentication is OFF')
  expect(dev.output).toMatch(/curl -X POST http:\/\/localhost:\d+\/jobs\/welcome-email/)
  const base = `http://127.0.0.1:${port}`

  // Enqueued over HTTP, drained at once by the in-process loop, logged on one line.
  const id = await enqueue(base, 'welcome-email', { userId: 'u_smoke', email: 'ada@example.com' })
  await dev.waitFor(new RegExp(`welcome-email #${id} {2}attempt 1/5 {2}completed`), 30_000)
  const dead = await enqueue(base, 'resize-image', { imageId: 'missing-smoke', width: 64 })
  await dev.waitFor(
    new RegExp(`resize-image #${dead} {2}attempt 1/4 {2}failed after \\d+ ms, dead-lettered`),
    10_000,
  )

  // An order event fans out to both subscribers (orders.# audit, orders.created fulfilment).
  expect(dev.output).toMatch(/curl -X POST http:\/\/localhost:\d+\/events\/orders\.created/)
  const published = await fetch(`${base}/events/orders.created`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      payload: { orderId: 'o_smoke', customer: 'ada@example.com' },
      eventId: 'evt-smoke',
    }),
  })
  expect(published.status).toBe(202)
  expect(await published.json()).toMatchObject({ eventId: 'evt-smoke', jobs: 2 })
  await dev.waitFor(/order-audit #\d+ {2}attempt 1\/\d+ {2}completed/, 30_000)
  await dev.waitFor(/order-fulfilment #\d+ {2}attempt 1\/\d+ {2}completed/, 30_000)

  // Other commands cannot open the embedded database while dev holds it: they go through the server.
  const [queues, enqueued, secondDev] = await Promise.all([
    cli('queues', '--json'),
    cli('enqueue', 'welcome-email', '{"userId":"u_cli","email":"bo@example.com"}', '--json'),
    runCli(['dev', '--config', 'examples/sluice.config.ts', '--data-dir', dataDir], { env: { PORT: '0' } }),
  ])
  expect(queues.code).toBe(0)
  expect(queues.stderr).toContain('through the dev server')
  expect(queues.json<{ queues: { queue: string; deadLettered: number }[] }>().queues).toContainEqual(
    expect.objectContaining({ queue: 'images', deadLettered: 1 }),
  )
  expect(enqueued.code).toBe(0)
  const viaCli = enqueued.json<{ id: string }>().id
  await dev.waitFor(new RegExp(`welcome-email #${viaCli} {2}attempt 1/5 {2}completed`), 30_000)
  expect(secondDev.code).toBe(3)
  expect(secondDev.stderr).toContain('already running')

  dev.child.kill('SIGINT')
  expect(await dev.exited).toBe(0)
  expect(dev.output).toContain('Stopped.')
  expect(existsSync(join(dataDir, 'lock.json'))).toBe(false)

  // Restarted, it finds its data: migrations already applied, the dead letter still there.
  const again = startDev()
  await again.waitFor(/Sluice dev server is running/, 90_000)
  expect(again.output).toContain(`(version ${latestVersion()})`)
  const listed = await cli('dlq', 'list', '--json')
  expect(listed.code).toBe(0)
  expect(listed.json<{ deadLetters: { id: string }[] }>().deadLetters.map((d) => d.id)).toEqual([dead])
  again.child.kill('SIGTERM')
  expect(await again.exited).toBe(0)

  // With no server running, the rows are on disk: the archive and the example's outbox.
  const db = new PGlite(join(dataDir, 'pglite'))
  try {
    const archived = await db.query<{ id: string }>(
      "SELECT id::text AS id FROM sluice.archive WHERE status = 'completed' ORDER BY id",
    )
    expect(archived.rows.map((r) => r.id)).toEqual(expect.arrayContaining([id, viaCli]))
    const fulfilled = await db.query<{ order_id: string }>('SELECT order_id FROM example.fulfilments')
    expect(fulfilled.rows).toEqual([{ order_id: 'o_smoke' }])
    const audited = await db.query<{ topic: string }>('SELECT topic FROM example.order_audit')
    expect(audited.rows).toEqual([{ topic: 'orders.created' }])
    const outbox = await db.query<{ recipient: string }>('SELECT recipient FROM example.outbox ORDER BY id')
    expect(outbox.rows.map((r) => r.recipient)).toEqual(['ada@example.com', 'bo@example.com'])
  } finally {
    await db.close()
  }
}, 240_000)
