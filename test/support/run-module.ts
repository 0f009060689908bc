import { spawn } from 'node:child_process'
import { tsxLoader } from '../helpers/cli.js'

/**
 * Runs an ES module in a node process of its own (with tsx), with `env` added to this process's
 * environment; resolves with its exit code and what it wrote to stderr.
 */
export function runModule(
  source: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', tsxLoader, '--input-type=module', '-e', source], {
      env: { ...process.env, ...env },
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
