import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { tsxLoader } from '../helpers/cli.js'

const embedded = fileURLToPath(new URL('./embedded-postgres.ts', import.meta.url))

/** Runs an ES module in a node process of its own (with tsx); resolves with its exit code. */
function exitCodeOf(source: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', tsxLoader, '--input-type=module', '-e', source], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stderr }))
  })
}

// The test runner reports failed tests by the exit code it sets (process.exitCode) and lets the
// process end by itself: a process that has booted the embedded cluster must end with that code,
// or a run on it would pass whatever failed.
test('a process that booted and stopped the embedded cluster keeps the exit code it set', async () => {
  const run = await exitCodeOf(
    `import { bootEmbedded } from ${JSON.stringify(embedded)}
     const cluster = await bootEmbedded('sluice-exit-')
     await cluster.stop()
     process.exitCode = 3`,
  )
  expect(run.code, run.stderr).toBe(3)
}, 60_000)
