import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { runModule } from './run-module.js'

const embedded = fileURLToPath(new URL('./embedded-postgres.ts', import.meta.url))

// The test runner reports failed tests by the exit code it sets (process.exitCode) and lets the
// process end by itself: a process that has booted the embedded cluster must end with that code,
// or a run on it would pass whatever failed.
test('a process that booted and stopped the embedded cluster keeps the exit code it set', async () => {
  const run = await runModule(
    `import { bootEmbedded } from ${JSON.stringify(embedded)}
     const cluster = await bootEmbedded('sluice-exit-')
     await cluster.stop()
     process.exitCode = 3`,
  )
  expect(run.code, run.stderr).toBe(3)
}, 60_000)
