/**
 * The layers of src/, bottom to top, and the biome overrides that enforce them: a module may
 * import from its own layer and the layers below, never from one above. `npm run layers`
 * rewrites the `overrides` of biome.json from this table; CONTRIBUTING.md explains it.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

interface Layer {
  name: string
  /** Files and folders of src/ in this layer: `db/` is a folder, `errors.ts` a file. */
  members: string[]
}

export const LAYERS: Layer[] = [
  {
    name: 'foundation',
    members: ['errors.ts', 'names.ts', 'json.ts', 'callable.ts', 'optional.ts', 'validate.ts', 'crypto/'],
  },
  { name: 'db', members: ['db/'] },
  { name: 'sql', members: ['sql/'] },
  { name: 'migrate', members: ['migrate/'] },
  { name: 'maintain', members: ['maintain/'] },
  { name: 'jobs', members: ['jobs/'] },
  { name: 'controls, events, steps, wake', members: ['controls/', 'events/', 'steps/', 'wake/'] },
  { name: 'config, drain, tracing', members: ['config.ts', 'drain/', 'tracing/'] },
  { name: 'sluice', members: ['sluice.ts', 'inspect.ts', 'inspect-queries.ts'] },
  { name: 'http', members: ['http/'] },
  { name: 'adapters', members: ['platforms/', 'edge/', 'edge.ts', 'build/', 'cli/', 'index.ts'] },
]

const ZOD = {
  zod: {
    importNames: ['z'],
    message:
      "Use `import * as z from 'zod'`: esbuild cannot tree-shake the `z` re-export, which pulls all of zod (about 370 KiB more) into every bundle, the edge one included.",
  },
}

/**
 * How many folders deep src/ goes, plus room to grow: a file that deep reaches the top of src/
 * with that many `../`. A pattern is written for every depth, because `../cli/**` matches only
 * one folder up and would let `../../../cli/main.js` from src/http/admin/routes/ through.
 */
export const MAX_DEPTH = 6

/** The import specifiers that reach `member` from a file in a folder of src/ (any depth) and from a file at its root. */
export function specifiers(member: string): { fromFolder: string[]; fromRoot: string[] } {
  const target = member.endsWith('/') ? `${member}**` : member.replace(/\.ts$/, '.js')
  const fromFolder = Array.from({ length: MAX_DEPTH }, (_, i) => `${'../'.repeat(i + 1)}${target}`)
  return { fromFolder, fromRoot: [`./${target}`] }
}

function includes(member: string): string[] {
  return member.endsWith('/') ? [`src/${member}**`] : [`src/${member}`]
}

export function overrides(): unknown[] {
  const out: unknown[] = [
    {
      includes: ['src/**', 'examples/**', 'functions/**'],
      linter: { rules: { style: { noRestrictedImports: { level: 'error', options: { paths: ZOD } } } } },
    },
  ]
  LAYERS.forEach((layer, i) => {
    const above = LAYERS.slice(i + 1)
    if (above.length === 0) return
    const names = above.map((l) => l.name).join(', ')
    const message = `Layer "${layer.name}" must not import from the layers above it (${names}); see CONTRIBUTING.md, "Layers".`
    for (const member of layer.members) {
      const fromRoot = !member.endsWith('/')
      const group = above.flatMap((l) =>
        l.members.flatMap((m) => (fromRoot ? specifiers(m).fromRoot : specifiers(m).fromFolder)),
      )
      out.push({
        includes: includes(member),
        linter: {
          rules: {
            style: {
              noRestrictedImports: {
                level: 'error',
                options: { paths: ZOD, patterns: [{ group, message }] },
              },
            },
          },
        },
      })
    }
  })
  return out
}

if (process.argv[1]?.endsWith('layers.ts')) {
  const path = new URL('../biome.json', import.meta.url)
  const config = JSON.parse(readFileSync(path, 'utf8')) as { overrides: unknown[] }
  config.overrides = overrides()
  if (process.argv.includes('--check')) {
    // Compared as data: biome formats the file its own way.
    if (JSON.stringify(JSON.parse(readFileSync(path, 'utf8'))) !== JSON.stringify(config)) {
      console.error('biome.json does not match scripts/layers.ts: run `npm run layers`.')
      process.exit(1)
    }
  } else {
    writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`)
    execFileSync('npx', ['biome', 'format', '--write', fileURLToPath(path)], { stdio: 'ignore' })
  }
}
