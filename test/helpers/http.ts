import type { Hono } from 'hono'
import { type AppOptions, createApp, type ErrorBody } from '../../src/index.js'
import type { TestSluice } from './db.js'

/** Two signing secrets / bearer tokens, as SLUICE_SECRET would hold them while rotating. */
export const SECRET = 'sk_current_2f6b1c8e9a0d4e7f'
export const NEXT_SECRET = 'sk_next_7c1d9e2a4b6f8031a5'
export const CRON_SECRET = 'cron_5e8a1f0c7b2d9e4a6c3b'

export const testEnv = {
  SLUICE_SECRET: `${SECRET},${NEXT_SECRET}`,
  CRON_SECRET,
}

/** The app over a test Sluice, with secrets from a fake environment (never the real one). */
export function appFor(t: TestSluice, options: AppOptions = {}): Hono {
  return createApp(t.sluice, { env: testEnv, onError: () => {}, ...options })
}

export const bearer = (token: string = SECRET): Record<string, string> => ({
  Authorization: `Bearer ${token}`,
})

export function postJson(
  app: Hono,
  path: string,
  body: unknown,
  headers: Record<string, string> = bearer(),
): Promise<Response> {
  return Promise.resolve(
    app.request(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  )
}

export async function errorOf(res: Response): Promise<ErrorBody['error']> {
  const body = (await res.json()) as ErrorBody
  return body.error
}

export async function countJobs(t: TestSluice): Promise<number> {
  const rows = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM $schema.jobs')
  return rows[0]!.n
}
