/**
 * Sluice inside a long-running Node.js server, next to the app's own routes: Sluice's HTTP API
 * under /sluice (POST /sluice/jobs/:name, /sluice/events/:topic, /sluice/drain, /sluice/maintain,
 * GET /sluice/health), the rest is yours. `@hono/node-server` turns a fetch handler into a Node
 * request listener (install it: `npm install @hono/node-server`).
 *
 * With Express, mount the same listener; Express strips the mount path:
 *
 *   import express from 'express'
 *   const app = express()
 *   app.use('/sluice', getRequestListener(createApp(sluice).fetch))
 *   app.listen(3000)
 *
 * A server that runs all the time can drain in-process too: `sluice.drain()` on a timer, or
 * maintenance's wake-ups to SLUICE_DRAIN_URL=http://host:port/sluice/drain.
 */
import { createServer, type Server } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import { Hono } from 'hono'
import { createApp, type Sluice } from '../src/index.js'

export function exampleServer(sluice: Sluice): Server {
  const app = new Hono()
  app.route('/sluice', createApp(sluice))
  app.get('/', (c) => c.text('your app'))
  return createServer(getRequestListener(app.fetch))
}
