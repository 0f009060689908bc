import { Hono } from 'hono'
import { describe, expect, test } from 'vitest'
import {
  ConfigError,
  ConflictError,
  DatabaseError,
  NotFoundError,
  PayloadTooLargeError,
  PermanentJobError,
  SluiceError,
  UnknownJobError,
  UnsupportedError,
  ValidationError,
} from '../../src/errors.js'
import { HTTP_STATUS, onError, statusOf } from '../../src/http/errors.js'

describe('the error to HTTP status table', () => {
  test('each core error answers with the status of its code', () => {
    expect(statusOf(new ValidationError('bad'))).toBe(400)
    expect(statusOf(new ValidationError('bad name', [], 'INVALID_NAME'))).toBe(400)
    expect(statusOf(new UnknownJobError('x'))).toBe(404)
    expect(statusOf(new NotFoundError('no such partition'))).toBe(404)
    expect(statusOf(new ConflictError('taken'))).toBe(409)
    expect(statusOf(new PayloadTooLargeError(2, 1))).toBe(413)
    expect(statusOf(new ConfigError('broken'))).toBe(500)
    expect(statusOf(new UnsupportedError('no'))).toBe(501)
    expect(statusOf(new DatabaseError('down', { code: 'DATABASE_UNAVAILABLE' }))).toBe(503)
    expect(statusOf(new DatabaseError('syntax'))).toBe(500)
  })

  test('core errors carry a code and no HTTP status', () => {
    const error = new ValidationError('bad')
    expect(error).not.toHaveProperty('status')
    expect(Object.keys(HTTP_STATUS)).toContain(error.code)
  })

  test('every error is a SluiceError with a code', () => {
    const permanent = new PermanentJobError('no')
    expect(permanent).toBeInstanceOf(SluiceError)
    expect(permanent).toMatchObject({ name: 'PermanentJobError', code: 'PERMANENT_FAILURE' })
  })

  test('onError answers with the status from the table', async () => {
    const app = new Hono()
    app.onError(onError(() => {}))
    app.get('/conflict', () => {
      throw new ConflictError('taken')
    })
    app.get('/down', () => {
      throw new DatabaseError('secret connection string', { code: 'DATABASE_UNAVAILABLE' })
    })
    const conflict = await app.request('/conflict')
    expect(conflict.status).toBe(409)
    expect(await conflict.json()).toEqual({ error: { code: 'CONFLICT', message: 'taken' } })
    const down = await app.request('/down')
    expect(down.status).toBe(503)
    expect(JSON.stringify(await down.json())).not.toContain('secret')
  })
})
