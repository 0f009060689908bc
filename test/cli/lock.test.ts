import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { acquire, type Holder, lockFile } from '../../src/cli/lock.js'
import { chooseTarget } from '../../src/cli/target.js'

// The lock that keeps two processes from opening one embedded database directory.
let dir: string
let other: ChildProcess | undefined
const savedUrl = process.env.DATABASE_URL

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-lock-'))
  delete process.env.DATABASE_URL
})

afterEach(async () => {
  other?.kill('SIGKILL')
  other = undefined
  if (savedUrl !== undefined) process.env.DATABASE_URL = savedUrl
  await rm(dir, { recursive: true, force: true })
})

/** Another live process, recorded as the holder of the lock. */
async function heldByAnother(command: string): Promise<Holder> {
  other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' })
  const holder = { pid: other.pid!, command, startedAt: new Date().toISOString() }
  await writeFile(lockFile(dir), JSON.stringify(holder))
  return holder
}

test('one holder at a time; release removes only its own lock', async () => {
  const lock = await acquire(dir, {
    pid: process.pid,
    command: 'migrate',
    startedAt: new Date().toISOString(),
  })
  expect('heldBy' in lock).toBe(false)
  if ('heldBy' in lock) return
  await lock.update({ url: 'http://127.0.0.1:1' })
  expect(JSON.parse(await readFile(lockFile(dir), 'utf8'))).toMatchObject({
    pid: process.pid,
    url: 'http://127.0.0.1:1',
  })
  await lock.release()
  expect(existsSync(lockFile(dir))).toBe(false)

  const holder = await heldByAnother('drain')
  const second = await acquire(dir, {
    pid: process.pid,
    command: 'status',
    startedAt: new Date().toISOString(),
  })
  expect(second).toEqual({ heldBy: holder })
  await lock.release()
  expect(existsSync(lockFile(dir))).toBe(true)
})

test('a lock left by a process that died is taken over', async () => {
  await writeFile(lockFile(dir), JSON.stringify({ pid: 2 ** 22 + 12345, command: 'dev', startedAt: '' }))
  const target = await chooseTarget('status', dir, { waitMs: 0 })
  expect(target).toMatchObject({ via: 'direct', database: `pglite:${join(dir, 'pglite')}` })
  if (target.via === 'direct') await target.lock?.release()
})

test('a busy embedded database is waited for, then reported with a hint', async () => {
  await heldByAnother('drain')
  const started = Date.now()
  const busy = chooseTarget('status', dir, { waitMs: 400 })
  await expect(busy).rejects.toMatchObject({
    code: 'DATABASE_BUSY',
    exitCode: 3,
    message: expect.stringContaining('`sluice drain`'),
    hint: expect.stringContaining('lock.json'),
  })
  expect(Date.now() - started).toBeGreaterThanOrEqual(400)

  // Once the holder goes away, a waiting command gets the database.
  const waiting = chooseTarget('status', dir, { waitMs: 10_000 })
  setTimeout(() => other?.kill('SIGKILL'), 300)
  const target = await waiting
  expect(target.via).toBe('direct')
  if (target.via === 'direct') await target.lock?.release()
})

test('a second dev server is refused at once', async () => {
  await heldByAnother('dev')
  const started = Date.now()
  await expect(chooseTarget('dev', dir, { allowDevServer: false, waitMs: 5_000 })).rejects.toMatchObject({
    code: 'DATABASE_BUSY',
    message: expect.stringContaining('already running'),
  })
  expect(Date.now() - started).toBeLessThan(2_000)
})
