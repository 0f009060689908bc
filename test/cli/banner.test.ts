import { expect, test } from 'vitest'
import * as z from 'zod'
import { banner } from '../../src/cli/dev/banner.js'
import { createSluice, defineJob } from '../../src/index.js'

const greet = defineJob({ name: 'greet', input: z.object({ who: z.string() }), run: () => {} })
const sluice = createSluice({ database: 'postgres://unused/x', jobs: [greet] })
const info = {
  sluice,
  configShown: 'sluice.config.ts',
  database: 'PostgreSQL',
  cli: 'npx sluice',
  url: 'http://localhost:3000',
  version: 1,
  pollMs: 1000,
  maintainMs: 30_000,
  registered: true,
}

test('without samples, the dev banner suggests no input that would be refused, and shows the input shape', () => {
  const text = banner({ ...info, samples: {} })
  expect(text).not.toContain('{"input":{}}')
  expect(text).toContain('/jobs/greet')
  expect(text).toMatch(/who/)
  expect(text).toContain('samples')
})

test('with a sample, the banner gives a ready command', () => {
  const text = banner({ ...info, samples: { greet: { who: 'ada' } } })
  expect(text).toContain(`-d '{"input":{"who":"ada"}}'`)
})
