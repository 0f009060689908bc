import { spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { build } from '../../scripts/build.js'
import { summarize } from '../lib/stats.js'
import type { Measurement, Scenario } from '../lib/types.js'

const ROOT = new URL('../..', import.meta.url).pathname
const IMPORTS = 7

/** Milliseconds a fresh Node process takes to import `file`, minus an empty process's start. */
function coldImport(file: string): number[] {
  const times: number[] = []
  for (let i = 0; i < IMPORTS; i++) {
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const t = performance.now(); await import(${JSON.stringify(`file://${file}`)}); console.log(performance.now() - t)`,
      ],
      {
        encoding: 'utf8',
        // What a deployed function has in its environment; the database is never contacted.
        env: {
          ...process.env,
          DATABASE_URL: 'postgres://bench@127.0.0.1:1/none',
          SLUICE_SECRET: 'bench-secret-0123456789abcdef',
          CRON_SECRET: 'bench-cron-secret-0123456789',
        },
      },
    )
    const ms = Number(run.stdout.trim().split('\n').pop())
    if (run.status !== 0 || !Number.isFinite(ms)) {
      throw new Error(`importing ${file} failed: ${run.stderr.trim().split('\n').slice(0, 3).join(' ')}`)
    }
    times.push(ms)
  }
  return times
}

/** Scenario 7: the size of each deployable bundle and how long a cold process takes to import it. */
export const bundles: Scenario = {
  name: 'bundles',
  title: 'Bundle sizes and cold import time (the esbuild bundles npm run build writes)',
  async run(ctx) {
    const base = join(ROOT, 'node_modules/.cache')
    await mkdir(base, { recursive: true })
    const outDir = await mkdtemp(join(base, 'sluice-bench-build-'))
    try {
      ctx.log('building the function bundles')
      const result = await build({ outDir, library: false, log: () => {} })
      const out: Measurement[] = []
      for (const bundle of result.bundles) {
        const imported =
          bundle.target === 'node' ? summarize(coldImport(join(outDir, bundle.file))) : undefined
        out.push({
          id: `bundle.${bundle.file}`,
          scenario: 'bundles',
          system: 'sluice',
          label: `${bundle.file} (${bundle.target})`,
          value: Math.round(bundle.bytes / 1024),
          unit: 'KiB',
          display: `${(bundle.bytes / 1024).toFixed(1)} KiB, ${(bundle.gzipBytes / 1024).toFixed(1)} KiB gzip${
            imported ? ` · cold import p50 ${imported.p50} ms` : ''
          }`,
          ...(imported ? { details: { coldImportMs: imported } } : {}),
        })
      }
      return {
        measurements: out,
        notes: [
          `Cold import: ${IMPORTS} fresh Node processes per bundle, time of the dynamic import() alone (the database is not contacted). The edge bundle targets workerd and is not imported in Node.`,
        ],
      }
    } finally {
      await rm(outDir, { recursive: true, force: true })
    }
  },
}
