import type { ErrorCode } from '../errors.js'
import { CliError, EXIT, type Explained } from './errors.js'
import type { Holder } from './lock.js'

/** A dev server that answers, as found in the lock file. */
export interface DevServer {
  pid: number
  url: string
  token: string
  config: string | undefined
}

export const TOKEN_HEADER = 'x-sluice-dev-token'

async function call(
  server: DevServer,
  path: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), [TOKEN_HEADER]: server.token },
    signal: AbortSignal.timeout(timeoutMs),
  })
}

/** The holder as a dev server, if it is one and answers as the same process. */
export async function reachDevServer(holder: Holder): Promise<DevServer | undefined> {
  if (holder.command !== 'dev' || !holder.url || !holder.token) return undefined
  const server = { pid: holder.pid, url: holder.url, token: holder.token, config: holder.config }
  try {
    const res = await call(server, '/_dev/ping', { method: 'GET' }, 1_500)
    if (!res.ok) return undefined
    const body = (await res.json()) as { pid?: unknown }
    return body.pid === holder.pid ? server : undefined
  } catch {
    return undefined
  }
}

/** Runs a command in the dev server's process and returns its result (or throws its explained error). */
export async function runOnDevServer(server: DevServer, command: string, args: unknown): Promise<unknown> {
  let res: Response
  try {
    res = await call(
      server,
      '/_dev/cli',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ command, args }),
      },
      // A drain may run for its whole budget; the server bounds the work, not this client.
      3_700_000,
    )
  } catch (error) {
    throw new CliError(
      `The dev server at ${server.url} (pid ${server.pid}) stopped answering: ${(error as Error).message}`,
      {
        code: 'DATABASE_UNAVAILABLE',
        exitCode: EXIT.DATABASE,
        hint: 'Look at its terminal; if it is gone, run the command again.',
      },
    )
  }
  const body = (await res.json().catch(() => ({}))) as { result?: unknown; error?: Explained }
  if (res.ok) return body.result
  const e = body.error ?? {
    code: 'FAILED',
    message: `The dev server answered ${res.status}`,
    exitCode: EXIT.FAILED,
  }
  throw new CliError(e.message, {
    // Relayed as the dev server explained it (its own explain() chose the code).
    code: e.code as ErrorCode,
    exitCode: e.exitCode ?? EXIT.FAILED,
    ...(e.hint ? { hint: e.hint } : {}),
    ...(e.issues ? { issues: e.issues } : {}),
  })
}
