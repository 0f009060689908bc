import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
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

/** Lints `files` (path → source) in a scratch project that has this repository's biome.json. */
function lintScratch(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-layers-'))
  try {
    const biome = JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8')) as Record<string, unknown>
    delete biome.$schema
    writeFileSync(join(dir, 'biome.json'), JSON.stringify(biome))
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true })
      writeFileSync(join(dir, path), text)
    }
    const bin = join(root, 'node_modules/.bin/biome')
    const run = spawnSync(bin, ['lint', '--only=style/noRestrictedImports', '--max-diagnostics=50', 'src'], {
      cwd: dir,
      encoding: 'utf8',
    })
    return `${run.stdout}${run.stderr}`
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('the layer rules hold at every depth: a module deep in http/ may not import the CLI', () => {
  const output = lintScratch({
    'src/cli/main.ts': 'export const main = 1\n',
    'src/http/app.ts': "import { main } from '../cli/main.js'\nexport const a = main\n",
    'src/http/admin/routes/jobs.ts': "import { main } from '../../../cli/main.js'\nexport const b = main\n",
    'src/http/admin/routes/ok.ts': "import { a } from '../../app.js'\nexport const c = a\n",
    'src/config.ts': "import { main } from './cli/main.js'\nexport const d = main\n",
  })
  const flagged = [...output.matchAll(/(src\/[\w/.-]+\.ts):\d+:\d+ lint\/style\/noRestrictedImports/g)].map(
    (m) => m[1],
  )
  expect(flagged.sort()).toEqual(['src/config.ts', 'src/http/admin/routes/jobs.ts', 'src/http/app.ts'])
})
