import { readFileSync, unlinkSync } from 'node:fs'
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * Who holds the embedded database. PGlite is single-process and does not guard its
 * directory itself: two processes opening it at once would corrupt it. So every CLI
 * process that opens `<dir>/pglite` first creates `<dir>/lock.json`; `sluice dev` adds
 * its URL and a token, and the other commands go through it while it runs.
 */
export interface Holder {
  pid: number
  command: string
  startedAt: string
  /** Set by `sluice dev` once it listens. */
  url?: string
  /** Sent back by the CLI on every request to the dev server's /_dev routes. */
  token?: string
  /** The config file the dev server runs. */
  config?: string
}

export interface Lock {
  readonly holder: Holder
  update(patch: Partial<Holder>): Promise<void>
  release(): Promise<void>
  /** For exit paths that cannot wait. */
  releaseSync(): void
}

export const lockFile = (dir: string): string => join(dir, 'lock.json')

export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function read(dir: string): Promise<Holder | undefined> {
  try {
    const holder = JSON.parse(await readFile(lockFile(dir), 'utf8')) as Holder
    return typeof holder?.pid === 'number' ? holder : undefined
  } catch {
    return undefined
  }
}

/** The live holder of the lock, if any. */
export async function currentHolder(dir: string): Promise<Holder | undefined> {
  const holder = await read(dir)
  return holder && alive(holder.pid) ? holder : undefined
}

/** Writes the whole file under a temporary name first, so a reader never sees half of it. */
async function writeTemp(dir: string, holder: Holder): Promise<string> {
  const temp = join(dir, `lock.${process.pid}.${Date.now()}.tmp`)
  await writeFile(temp, `${JSON.stringify(holder, null, 2)}\n`, { mode: 0o600 })
  return temp
}

/**
 * Takes the lock, or returns the live process holding it. A lock left by a process that
 * died is taken over.
 */
export async function acquire(dir: string, holder: Holder): Promise<Lock | { heldBy: Holder }> {
  await mkdir(dir, { recursive: true })
  const path = lockFile(dir)
  for (let round = 0; round < 3; round++) {
    const temp = await writeTemp(dir, holder)
    try {
      // link() fails if the lock exists: creating it is atomic, and it appears with its content.
      await link(temp, path)
      return makeLock(dir, holder)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    } finally {
      await unlink(temp).catch(() => {})
    }
    const current = await read(dir)
    if (current && alive(current.pid) && current.pid !== process.pid) return { heldBy: current }
    // Left behind by a process that is gone (or unreadable): remove it and try again.
    await unlink(path).catch(() => {})
  }
  const current = await read(dir)
  return { heldBy: current ?? { pid: 0, command: 'unknown', startedAt: new Date().toISOString() } }
}

function makeLock(dir: string, initial: Holder): Lock {
  let holder = initial
  const path = lockFile(dir)
  const ours = async (): Promise<boolean> => (await read(dir))?.pid === process.pid
  return {
    get holder() {
      return holder
    },
    async update(patch) {
      holder = { ...holder, ...patch }
      const temp = await writeTemp(dir, holder)
      await rename(temp, path)
    },
    async release() {
      if (await ours()) await unlink(path).catch(() => {})
    },
    releaseSync() {
      try {
        if ((JSON.parse(readFileSync(path, 'utf8')) as Holder).pid === process.pid) unlinkSync(path)
      } catch {
        // Already gone.
      }
    },
  }
}
