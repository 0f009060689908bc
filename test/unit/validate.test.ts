import { spawnSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import * as z from 'zod/mini'
import { given, ONCE } from '../../src/validate.js'

describe('given: an optional option group whose schema is built when a value comes', () => {
  const counted = () => {
    let builds = 0
    const schema = z.strictObject({
      name: z.string(),
      retry: given(() => {
        builds++
        return z.strictObject({ max: z.int().check(z.minimum(1), z.maximum(10)) })
      }),
    })
    return { schema, builds: () => builds }
  }

  test('absent or undefined: passes, and the schema is never built', () => {
    const { schema, builds } = counted()
    expect(z.safeParse(schema, { name: 'a' }, ONCE).success).toBe(true)
    expect(z.safeParse(schema, { name: 'a', retry: undefined }, ONCE).success).toBe(true)
    expect(builds()).toBe(0)
  })

  test('given: checked by the schema, built once, the value passed through', () => {
    const { schema, builds } = counted()
    expect(z.safeParse(schema, { name: 'a', retry: { max: 3 } }, ONCE)).toEqual({
      success: true,
      data: { name: 'a', retry: { max: 3 } },
    })
    z.safeParse(schema, { name: 'b', retry: { max: 4 } }, ONCE)
    expect(builds()).toBe(1)
  })

  test("a bad value fails with the schema's own issues, under the field's path", () => {
    const { schema } = counted()
    const bad = z.safeParse(schema, { name: 'a', retry: { max: 0 } }, ONCE)
    expect(bad.success).toBe(false)
    expect(bad.error?.issues).toMatchObject([{ code: 'too_small', path: ['retry', 'max'], minimum: 1 }])
    const unknownKey = z.safeParse(schema, { name: 'a', retry: { max: 1, extra: true } }, ONCE)
    expect(unknownKey.error?.issues).toMatchObject([{ code: 'unrecognized_keys', path: ['retry'] }])
    const wrongType = z.safeParse(schema, { name: 'a', retry: null }, ONCE)
    expect(wrongType.error?.issues).toMatchObject([{ code: 'invalid_type', path: ['retry'] }])
  })
})

test('importing defineJob builds almost no schema; a job builds the option groups it uses', () => {
  const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/zod-builds.ts'], {
    encoding: 'utf8',
  })
  expect(child.status, child.stderr).toBe(0)
  const counts = JSON.parse(child.stdout) as { imported: number; plain: number; admission: number }
  // Before option groups were built lazily, the import alone built 175, the admission policy's included.
  expect(counts.imported).toBeLessThanOrEqual(30)
  expect(counts.plain).toBeLessThanOrEqual(60)
  // The admission policy's schemas come with the first job that has one.
  expect(counts.admission).toBeGreaterThanOrEqual(40)
})
