import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { root } from '../helpers/build.js'

export const run = promisify(execFile)

/** No platform CLI may phone home, ask for a login or print ads in a test. */
export const OFFLINE_ENV = {
  SLS_TELEMETRY_DISABLED: '1',
  SLS_TRACKING_DISABLED: '1',
  SLS_NOTIFICATIONS_MODE: 'off',
  SLS_DEPRECATION_DISABLE: '*',
  SLS_INTERACTIVE_SETUP_DISABLE: '1',
  AWS_ACCESS_KEY_ID: '',
  AWS_SECRET_ACCESS_KEY: '',
  AWS_PROFILE: '',
  AWS_SDK_LOAD_CONFIG: '0',
  WRANGLER_SEND_METRICS: 'false',
  VERCEL_TELEMETRY_DISABLED: '1',
  CI: '1',
}

export const LAMBDA_LOCAL = join(root, 'scripts/lambda-local.mjs')

export interface Received {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

/** A local HTTP server playing the drain's URL: records every request, answers 200 at once. */
export async function startDrainStub() {
  const received: Received[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"claimed":0}')
    })
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/drain`,
    received,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections()
        server.close(() => ok())
      }),
  }
}

/** Resolves when the process is stopped (state T in /proc), polling. */
export async function waitStopped(child: ChildProcess, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (Date.now() < end) {
    const stat = await readFile(`/proc/${child.pid}/stat`, 'utf8').catch(() => '')
    // pid (comm) state …: comm may hold spaces, so read the state after the last ')'.
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')) return
    if (child.exitCode !== null) throw new Error(`the process exited (${child.exitCode}) instead of stopping`)
    await new Promise((ok) => setTimeout(ok, 5))
  }
  throw new Error('the process did not stop')
}

/** Runs scripts/lambda-local.mjs in a child; resolves with its first stdout line (the result). */
export function invokeLocal(
  handler: string,
  event: unknown,
  options: { cwd: string; env: Record<string, string>; stopOnReturn?: boolean; timeoutMs?: number },
): { child: ChildProcess; result: Promise<unknown>; exited: Promise<number | null>; stderr: () => string } {
  const args = [LAMBDA_LOCAL, handler, '-', '--timeout', String(options.timeoutMs ?? 30_000)]
  if (options.stopOnReturn) args.push('--stop-on-return')
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', ...options.env }
  // The runtime reads NODE_OPTIONS when it starts node; so does this child.
  const child = spawn(process.execPath, args, { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr!.on('data', (chunk) => {
    err += chunk
  })
  const result = new Promise<unknown>((ok, fail) => {
    child.stdout!.on('data', (chunk) => {
      out += chunk
      const nl = out.indexOf('\n')
      if (nl >= 0) ok(JSON.parse(out.slice(0, nl)))
    })
    child.on('exit', (code) => fail(new Error(`lambda-local exited ${code} without a result:\n${err}`)))
  })
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)))
  child.stdin!.end(JSON.stringify(event))
  return { child, result, exited, stderr: () => err }
}
