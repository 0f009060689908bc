import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { expect, test } from 'vitest'
import { LAYERS, overrides } from '../../scripts/layers.js'

const root = join(import.meta.dirname, '../..')
const src = join(root, 'src')
const files = (readdirSync(src, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.split('\\').join('/'))

test('biome.json enforces the layers of scripts/layers.ts (npm run layers rewrites it)', () => {
  const biome = JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8')) as { overrides: unknown }
  expect(biome.overrides).toEqual(overrides())
})

test('every module of src/ belongs to a layer', () => {
  const members = LAYERS.flatMap((l) => l.members)
  const orphans = files.filter((f) => !members.some((m) => (m.endsWith('/') ? f.startsWith(m) : f === m)))
  expect(orphans).toEqual([])
})

test('SQL text lives in src/sql (and the bootstrap DDL of src/migrate)', () => {
  const sql = /`[^`]*\b(SELECT\s[\s\S]*\sFROM|INSERT INTO|UPDATE\s+\$\{|DELETE FROM)\b/
  const outside = files.filter(
    (f) => !f.startsWith('sql/') && !f.startsWith('migrate/') && sql.test(readFileSync(join(src, f), 'utf8')),
  )
  expect(outside.map((f) => relative(root, join(src, f)))).toEqual([])
})
