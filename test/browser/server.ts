/** Serves the Sluice app with its dashboard on a random local port, as a deployment would. */
import type { AddressInfo } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import { createApp } from '../../src/http/app.js'
import type { Sluice } from '../../src/index.js'

export const SECRET = 'browser-test-secret-0123456789abcdef'
export const DASHBOARD = '/dashboard'

export interface Served {
  /** e.g. http://127.0.0.1:41234 */
  origin: string
  /** The dashboard's URL for a path under it: `url('/jobs')`. */
  url(path?: string): string
  close(): Promise<void>
}

export async function serve(sluice: Sluice): Promise<Served> {
  const app = createApp(sluice, { auth: { secrets: [SECRET] }, dashboard: true })
  const server = createAdaptorServer({ fetch: app.fetch })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    url: (path = '/') => `${origin}${DASHBOARD}${path}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Keep-alive sockets of the browser would hold close() open.
        ;(server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}
