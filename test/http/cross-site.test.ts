import { request as httpRequest } from 'node:http'
import type { Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { devApp, devHosts, type Listening, listen } from '../../src/cli/dev/server.js'
import { defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, bearer, countJobs, errorOf } from '../helpers/http.js'

const greet = defineJob({ name: 'greet', input: z.object({ who: z.string() }), run: () => {} })
const body = JSON.stringify({ input: { who: 'x' } })

describe('dev server: cross-site requests', () => {
  let t: TestSluice
  let server: Listening

  beforeAll(async () => {
    t = await makeSluice({ jobs: [greet] })
    server = await listen(
      (port) =>
        devApp({
          sluice: t.sluice,
          context: {
            sluice: t.sluice,
            app: { sluice: t.sluice, setup: undefined, samples: {}, path: '' },
            where: '',
          },
          commands: new Map(),
          token: 'dev-token-for-tests-000000',
          allowedHosts: devHosts('127.0.0.1', port),
          onError: () => {},
        }),
      '127.0.0.1',
      0,
    )
  })
  afterAll(async () => {
    await server.close()
    await t.cleanup()
  })
  beforeEach(() => t.sql('DELETE FROM $schema.jobs'))

  /** A raw HTTP request: fetch would not let a test set Host. */
  function raw(
    method: string,
    path: string,
    headers: Record<string, string>,
    sent?: string,
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: server.port, method, path, headers, setHost: !('Host' in headers) },
        (res) => {
          let text = ''
          res.on('data', (d: Buffer) => {
            text += d.toString()
          })
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
        },
      )
      req.on('error', reject)
      req.end(sent)
    })
  }

  test('a text/plain POST (what a web page can send without asking) is refused with 415', async () => {
    const res = await raw('POST', '/jobs/greet', { 'Content-Type': 'text/plain;charset=UTF-8' }, body)
    expect(res.status).toBe(415)
    expect(JSON.parse(res.body).error.code).toBe('UNSUPPORTED_MEDIA_TYPE')
    expect(await countJobs(t)).toBe(0)
  })

  test('a POST from another origin is refused with 403', async () => {
    for (const path of ['/jobs/greet', '/drain', '/maintain']) {
      const res = await raw(
        'POST',
        path,
        { 'Content-Type': 'application/json', Origin: 'https://evil.example' },
        path === '/jobs/greet' ? body : '{}',
      )
      expect(res.status, path).toBe(403)
      expect(JSON.parse(res.body).error.code).toBe('FORBIDDEN')
    }
    expect(await countJobs(t)).toBe(0)
  })

  test('a foreign Host (DNS rebinding) is refused, reads included', async () => {
    const host = `rebind.evil.example:${server.port}`
    expect((await raw('GET', '/metrics', { Host: host })).status).toBe(403)
    expect((await raw('GET', '/health', { Host: host })).status).toBe(403)
    const res = await raw('POST', '/jobs/greet', { Host: host, 'Content-Type': 'application/json' }, body)
    expect(res.status).toBe(403)
    // It names what sluice dev answers to, not an option sluice dev does not have.
    expect(JSON.parse(res.body).error.message).toMatch(/sluice dev answers to localhost.* --host address/)
    expect(res.body).not.toContain('allowedHosts')
    expect(await countJobs(t)).toBe(0)
  })

  test('the same requests from this machine pass', async () => {
    for (const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`, `[::1]:${server.port}`]) {
      expect((await raw('GET', '/metrics', { Host: host })).status, host).toBe(200)
    }
    const res = await raw(
      'POST',
      '/jobs/greet',
      {
        Host: `localhost:${server.port}`,
        'Content-Type': 'application/json',
        Origin: `http://localhost:${server.port}`,
      },
      body,
    )
    expect(res.status).toBe(202)
    expect((await raw('POST', '/drain', {})).status).toBe(200)
  })

  test('a loopback name on another port is foreign too', async () => {
    expect((await raw('GET', '/metrics', { Host: `localhost:${server.port + 1}` })).status).toBe(403)
  })

  test('the dashboard is served without log-in, and a dashboard form from another origin is refused', async () => {
    const page = await raw('GET', '/dashboard/queues', {})
    expect(page.status).toBe(200)
    expect(page.body).toContain('<main id="main"')
    const forged = await raw(
      'POST',
      '/dashboard/queues/default/pause',
      { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://evil.example' },
      '_csrf=x',
    )
    expect(forged.status).toBe(403)
    expect((await t.sluice.inspect.queueStates()).find((q) => q.name === 'default')?.paused ?? false).toBe(
      false,
    )
  })
})

describe('deployed app: cross-site requests', () => {
  let t: TestSluice
  let app: Hono

  beforeAll(async () => {
    t = await makeSluice({ jobs: [greet] })
    app = appFor(t)
  })
  afterAll(() => t.cleanup())
  beforeEach(() => t.sql('DELETE FROM $schema.jobs'))

  const post = (path: string, headers: Record<string, string>, sent = body) =>
    app.request(`https://api.example.com${path}`, {
      method: 'POST',
      headers: { ...bearer(), ...headers },
      body: sent,
    })

  test('non-JSON bodies are refused with 415 on every write route, before anything runs', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      for (const path of ['/jobs/greet', '/events/orders.created', '/drain', '/maintain']) {
        const res = await post(path, { 'Content-Type': type })
        expect(res.status, `${type} ${path}`).toBe(415)
        expect((await errorOf(res)).message).toMatch(/application\/json/)
      }
    }
    expect(await countJobs(t)).toBe(0)
  })

  test('an Origin that is not the app itself is refused with 403', async () => {
    const res = await post('/jobs/greet', {
      'Content-Type': 'application/json',
      Origin: 'https://evil.example',
    })
    expect(res.status).toBe(403)
    expect(await errorOf(res)).toMatchObject({ code: 'FORBIDDEN' })
    const nullOrigin = await post('/jobs/greet', { 'Content-Type': 'application/json', Origin: 'null' })
    expect(nullOrigin.status).toBe(403)
    expect(await countJobs(t)).toBe(0)
  })

  test('same-origin, allow-listed and Origin-less requests pass; Vercel cron GET /maintain passes', async () => {
    const json = { 'Content-Type': 'application/json' }
    expect((await post('/jobs/greet', { ...json, Origin: 'https://api.example.com' })).status).toBe(202)
    expect((await post('/jobs/greet', json)).status).toBe(202)
    const listed = appFor(t, { allowedOrigins: ['https://admin.example.com'] })
    const res = await listed.request('https://api.example.com/jobs/greet', {
      method: 'POST',
      headers: { ...bearer(), ...json, Origin: 'https://admin.example.com' },
      body,
    })
    expect(res.status).toBe(202)
    // Behind a proxy that rewrites Host, the public name arrives as X-Forwarded-Host.
    const proxied = await app.request('http://127.0.0.1:3000/jobs/greet', {
      method: 'POST',
      headers: {
        ...bearer(),
        ...json,
        Origin: 'https://api.example.com',
        'X-Forwarded-Host': 'api.example.com',
      },
      body,
    })
    expect(proxied.status).toBe(202)
    const cron = await app.request('https://api.example.com/maintain', { headers: bearer() })
    expect(cron.status).toBe(200)
    // A bodyless POST without a content type (curl -X POST) is not a browser form: it passes.
    expect(
      (await app.request('https://api.example.com/drain', { method: 'POST', headers: bearer() })).status,
    ).toBe(200)
  })

  test('the options are validated up front', () => {
    expect(() => appFor(t, { allowedHosts: ['https://api.example.com'] })).toThrow(
      /allowedHosts\.0 must be a host/,
    )
    expect(() => appFor(t, { allowedOrigins: ['api.example.com'] })).toThrow(
      /allowedOrigins\.0 must be an origin/,
    )
    expect(() => appFor(t, { allowedOrigins: ['https://a.example.com/path'] })).toThrow(/allowedOrigins/)
    expect(() =>
      appFor(t, { allowedHosts: ['api.example.com', '*.example.com', '[::1]:3000'] }),
    ).not.toThrow()
  })

  test('allowedHosts refuses other Host headers', async () => {
    const pinned = appFor(t, { allowedHosts: ['api.example.com'] })
    expect((await pinned.request('https://api.example.com/health')).status).toBe(200)
    const refused = await pinned.request('https://rebind.example/health')
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      'see the allowedHosts option',
    )
  })
})
