/**
 * A project without a sluice.config.* file: the CLI loads the module `sluice init` imports the
 * functions from (src/sluice.mjs here), and takes its named export `sluice`. The commands init
 * prints (`sluice migrate`) then work as printed.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { UsageError } from '../../src/cli/errors.js'
import { findConfig, loadFailure } from '../../src/cli/load-config.js'
import { repo, runCli } from '../helpers/cli.js'
import { databaseUrl, pgPool, uniqueSchema } from '../helpers/db.js'

const SPAWNS = { timeout: 180_000 }
const index = pathToFileURL(join(repo, 'src/index.ts')).href
const appSource = `import * as z from 'zod'
import { createSluice, defineJob } from ${JSON.stringify(index)}

export const ping = defineJob({ name: 'ping', input: z.object({ n: z.number() }), run: async ({ n }) => ({ n }) })
export const sluice = createSluice({ jobs: [ping] })
`

let dir: string
const schema = uniqueSchema('appmod')
const admin = pgPool(1)

async function project(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(dir, 'p-'))
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true })
    await writeFile(join(root, path), content)
  }
  // zod, as the app's own dependency would be.
  await symlink(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir')
  return root
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-app-module-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

describe('the app module, when there is no sluice.config.*', () => {
  test('found where sluice init looks, sluice.config.* first', async () => {
    const root = await project({
      'src/sluice.mjs': 'export const notIt = 1\n',
      'src/lib/sluice.mjs': 'export const sluice = createSluice({ jobs })\n',
    })
    expect(await findConfig(undefined, root)).toBe(join(root, 'src/lib/sluice.mjs'))
    await writeFile(join(root, 'sluice.config.mjs'), 'export default () => null\n')
    expect(await findConfig(undefined, root)).toBe(join(root, 'sluice.config.mjs'))
  })

  test('none: the error names where the CLI looked', async () => {
    const root = await project({ 'src/sluice.mjs': 'export const notIt = 1\n' })
    const error = await findConfig(undefined, root).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UsageError)
    expect((error as Error).message).toContain('no module there that exports `sluice`')
  })

  test('migrate, enqueue and drain load its named export `sluice`', SPAWNS, async () => {
    const root = await project({ 'package.json': '{"type":"module"}', 'src/sluice.mjs': appSource })
    const env = { DATABASE_URL: databaseUrl, SLUICE_SCHEMA: schema }
    const migrate = await runCli(['migrate', '--json'], { cwd: root, env })
    expect(migrate.code, migrate.stderr).toBe(0)
    const enqueue = await runCli(['enqueue', 'ping', '{"n":7}', '--json'], { cwd: root, env })
    expect(enqueue.code, enqueue.stderr).toBe(0)
    const drain = await runCli(['drain', '--json'], { cwd: root, env })
    expect(drain.code, drain.stderr).toBe(0)
    expect(drain.json()).toMatchObject({ claimed: 1, completed: 1 })
  })

  test('a .js module with imports read as CommonJS: the hint says how to make it ESM', () => {
    // What Node throws importing such a file under plain Node (no tsx, which would read it anyway).
    const error = new SyntaxError('Cannot use import statement outside a module')
    const failure = loadFailure('sluice.config.js', error, 'import')
    expect(failure.message).toBe(
      'Loading sluice.config.js failed: Cannot use import statement outside a module',
    )
    expect(failure.hint).toContain('set "type": "module" in package.json')
    expect(loadFailure('sluice.config.js', new Error('boom'), 'import').hint).toBe(
      'The error comes from the config file or a module it imports.',
    )
  })

  test('a syntax error in the module names its line', SPAWNS, async () => {
    const root = await project({
      'package.json': '{"type":"module"}',
      'src/sluice.mjs': 'export const sluice = 1\nconst oops = this is wrong\n',
    })
    const run = await runCli(['status'], { cwd: root, env: { DATABASE_URL: databaseUrl } })
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(
      /Loading src\/sluice\.mjs failed: Unexpected identifier 'is' \(at src\/sluice\.mjs:2\)/,
    )
  })

  test('a module with neither a default export nor a Sluice named `sluice` is refused', SPAWNS, async () => {
    const root = await project({
      'package.json': '{"type":"module"}',
      'src/sluice.mjs': 'export const sluice = { not: "a sluice" }\n',
    })
    const run = await runCli(['status'], { cwd: root, env: { DATABASE_URL: databaseUrl } })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(
      'src/sluice.mjs has no default export and no export `sluice` that is a Sluice',
    )
  })
})
