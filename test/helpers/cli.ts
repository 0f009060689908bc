import { type ChildProcess, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const repo = fileURLToPath(new URL('../..', import.meta.url))
export const mainScript = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url))
export const exampleConfig = fileURLToPath(new URL('../../examples/sluice.config.ts', import.meta.url))
/** tsx's loader, by absolute URL, so that the CLI runs from any working directory. */
export const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href

/** `--import` this to make the packages in SLUICE_HIDE_PACKAGES resolve as not installed. */
export const hidePackages = pathToFileURL(
  fileURLToPath(new URL('../support/hide-packages.mjs', import.meta.url)),
).href

export interface CliRun {
  code: number | null
  stdout: string
  stderr: string
  /** stdout parsed: it must be exactly one JSON document. */
  json<T = Record<string, unknown>>(): T
}

/** The environment a spawned CLI gets: the test's, minus DATABASE_URL unless given. */
export function cliEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', DATABASE_URL: undefined, ...env }
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key]
  return merged
}

/** Spawns `node --import tsx src/cli/main.ts …args` and collects its output. */
export function runCli(
  args: string[],
  options: {
    env?: Record<string, string | undefined>
    cwd?: string
    input?: string
    /** Packages that resolve as not installed (see test/support/hide-packages.mjs). */
    hide?: string[]
  } = {},
): Promise<CliRun> {
  const hide = options.hide?.length ? ['--import', hidePackages] : []
  const env = options.hide?.length
    ? { ...options.env, SLUICE_HIDE_PACKAGES: options.hide.join(',') }
    : options.env
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...hide, '--import', tsxLoader, mainScript, ...args], {
      cwd: options.cwd ?? repo,
      env: cliEnv(env ?? {}),
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    child.on('error', reject)
    child.stdin.end(options.input ?? '')
    child.on('close', (code) =>
      resolve({
        code,
        stdout,
        stderr,
        json<T>() {
          try {
            return JSON.parse(stdout) as T
          } catch {
            throw new Error(`stdout is not one JSON document:\n${stdout}\nstderr:\n${stderr}`)
          }
        },
      }),
    )
  })
}

/** A long-running child whose output is watched line by line. */
export class Watched {
  output = ''
  private waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = []
  readonly exited: Promise<number | null>

  constructor(readonly child: ChildProcess) {
    const take = (d: Buffer): void => {
      this.output += d.toString()
      this.waiters = this.waiters.filter((w) => {
        const match = this.output.match(w.pattern)
        if (match) w.resolve(match)
        return !match
      })
    }
    child.stdout?.on('data', take)
    child.stderr?.on('data', take)
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
  }

  /** Resolves with the first match of `pattern` in everything printed so far or later. */
  waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
    const match = this.output.match(pattern)
    if (match) return Promise.resolve(match)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Timed out waiting for ${pattern}; output so far:\n${this.output}`)),
        timeoutMs,
      )
      this.waiters.push({
        pattern,
        resolve: (m) => {
          clearTimeout(timer)
          resolve(m)
        },
      })
    })
  }
}

/**
 * Runs the tasks a few at a time: each CLI process costs most of a CPU for a moment, and a
 * burst of them would slow the test files running beside this one.
 */
export async function fewAtATime<T extends (() => Promise<unknown>)[]>(
  tasks: [...T],
  limit = 3,
): Promise<{ [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  const results: unknown[] = new Array(tasks.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++
      results[i] = await tasks[i]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker))
  return results as { [K in keyof T]: Awaited<ReturnType<T[K]>> }
}
