/**
 * The consumer's side of the package: `npm pack` of this repository (prepack builds dist/),
 * then a fresh project in a temporary directory, outside this repository, that installs the
 * tarball with the packages the docs name (from the npm registry, through npm's own cache).
 * Each platform gets a directory of its own under the project, sharing its node_modules.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { root } from '../helpers/build.js'

const exec = promisify(execFile)

/** What a fresh project installs besides the tarball: the peers and tools getting-started.md names. */
export const DEPENDENCIES = { zod: '^4', pg: '^8.11', '@neondatabase/serverless': '^1' }
export const DEV_DEPENDENCIES = {
  typescript: '~5.9',
  '@types/node': '^20',
  tsx: '^4',
  esbuild: '^0.28',
  next: '^16',
  react: '^19',
  'react-dom': '^19',
  '@types/react': '^19',
  '@types/react-dom': '^19',
  wrangler: '^4',
  express: '^5',
  '@hono/node-server': '^2',
  '@electric-sql/pglite': '^0.5',
}

/** Each step's command line and what it answered, for the log and the report. */
export const steps: string[] = []

export interface Ran {
  stdout: string
  stderr: string
}

/** Runs a command; a failure throws with its output. */
export async function sh(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number },
): Promise<Ran> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env }
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  const line = `${command.split('/').pop()} ${args.join(' ')}`
  try {
    const { stdout, stderr } = await exec(command, [...args], {
      cwd: options.cwd,
      env,
      maxBuffer: 64 * 1024 * 1024,
      timeout: options.timeoutMs ?? 600_000,
    })
    steps.push(`ok   ${line}`)
    return { stdout, stderr }
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; code?: number }
    steps.push(`FAIL ${line} (exit ${e.code})`)
    throw new Error(`${line} failed (exit ${e.code}):\n${e.stdout ?? ''}\n${e.stderr ?? ''}`)
  }
}

export interface Consumer {
  /** The project's root: package.json, node_modules. */
  dir: string
  tarball: string
  /** A binary of the project's node_modules/.bin. */
  bin(name: string): string
  /** A fresh, empty sub-project (its own package.json and tsconfig.json) sharing node_modules. */
  sub(name: string, tsconfig?: Record<string, unknown>): Promise<string>
  remove(): Promise<void>
}

export const STRICT_TSCONFIG = {
  compilerOptions: {
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
  },
}

/** Packs this repository and installs the tarball into a new project. */
export async function makeConsumer(): Promise<Consumer> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-consumer-'))
  // `npm pack` runs prepack, which builds dist/; without one, build it first.
  const { scripts } = await readJson<{ scripts: Record<string, string> }>(join(root, 'package.json'))
  if (!scripts.prepack) await sh('npm', ['run', 'build'], { cwd: root })
  const { stdout } = await sh('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root })
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string }[]
  const tarball = join(dir, packed!.filename)
  await writeFile(
    join(dir, 'package.json'),
    `${JSON.stringify(
      {
        name: 'consumer',
        private: true,
        type: 'module',
        dependencies: { sluice: `file:${tarball}`, ...DEPENDENCIES },
        devDependencies: DEV_DEPENDENCIES,
        // npm 11 runs only the install scripts a project allows: esbuild's and workerd's fetch their binaries.
        allowScripts: { esbuild: true, workerd: true },
      },
      null,
      2,
    )}\n`,
  )
  await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
    cwd: dir,
    env: { npm_config_update_notifier: 'false' },
  })
  const bin = (name: string) => join(dir, 'node_modules/.bin', name)
  return {
    dir,
    tarball,
    bin,
    async sub(name, tsconfig = STRICT_TSCONFIG) {
      const path = join(dir, name)
      await mkdir(path, { recursive: true })
      await writeFile(
        join(path, 'package.json'),
        `${JSON.stringify({ name, private: true, type: 'module' })}\n`,
      )
      await writeFile(join(path, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`)
      return path
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  }
}

export const readJson = async <T>(path: string): Promise<T> => JSON.parse(await readFile(path, 'utf8')) as T

/** A long-running process (next start); `stop()` ends it and waits for it to exit. */
export function startProcess(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string | undefined> },
): { child: ChildProcess; output: () => string; stop(): Promise<void> } {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env }
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  const child = spawn(command, [...args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.on('data', (chunk) => {
    out += chunk
  })
  child.stderr!.on('data', (chunk) => {
    out += chunk
  })
  const exited = new Promise<void>((ok) => child.on('exit', () => ok()))
  return {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}

/** Polls `check` until it returns a value (not undefined), or throws after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const end = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < end) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (error) {
      last = error
    }
    await new Promise((ok) => setTimeout(ok, 200))
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`)
}
