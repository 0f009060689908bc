#!/usr/bin/env node
/**
 * Runs a bundled Lambda handler the way the Node.js runtime does: imports the module, calls
 * `handler(event, context)` once with a context whose remaining time counts down, and prints
 * the result as JSON on stdout (logs go to stderr). The environment is the process's own.
 *
 *   node scripts/lambda-local.mjs dist/functions/aws/api.handler event.json [--timeout 29000]
 *   echo '{}' | node scripts/lambda-local.mjs dist/functions/aws/maintain.handler -
 *
 * The first argument is serverless.yml's `handler` (file without extension, then the export).
 * `--stop-on-return` sends SIGSTOP to this process the moment the handler's promise resolves,
 * after printing the result: Lambda freezes a function there, so whatever the handler left
 * running (an unsent request, a timer) is stuck until `kill -CONT`.
 */
import { existsSync, readFileSync, writeSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

function usage(message) {
  process.stderr.write(
    `${message}\nusage: lambda-local.mjs <file.export> <event.json|-> [--timeout ms] [--stop-on-return]\n`,
  )
  process.exit(2)
}

const args = process.argv.slice(2)
const positional = []
let timeoutMs = 30_000
let stopOnReturn = false
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--timeout') timeoutMs = Number(args[++i])
  else if (args[i] === '--stop-on-return') stopOnReturn = true
  else positional.push(args[i])
}
if (positional.length !== 2) usage('expected a handler and an event')
if (!Number.isInteger(timeoutMs) || timeoutMs < 1) usage('--timeout must be a whole number of ms')

const [handlerPath, eventPath] = positional
const dot = handlerPath.lastIndexOf('.')
if (dot < 1) usage(`handler "${handlerPath}" must be <file>.<export>`)
const base = resolve(handlerPath.slice(0, dot))
const exportName = handlerPath.slice(dot + 1)
// The Node.js runtime looks for .js, .mjs and .cjs, in that order.
const file = ['.js', '.mjs', '.cjs'].map((ext) => base + ext).find((f) => existsSync(f))
if (!file) usage(`no ${base}.js, .mjs or .cjs`)
const event = JSON.parse(readFileSync(eventPath === '-' ? 0 : eventPath, 'utf8'))

const name = process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'local'
const deadline = Date.now() + timeoutMs
const context = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: name,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
  memoryLimitInMB: '512',
  awsRequestId: crypto.randomUUID(),
  logGroupName: `/aws/lambda/${name}`,
  logStreamName: 'local',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
}

// Lambda sends the handler's console output to its logs, never into the result: here, stderr.
for (const method of ['log', 'info', 'debug']) console[method] = console.error

const timer = setTimeout(() => {
  process.stderr.write(`Task timed out after ${timeoutMs} ms\n`)
  process.exit(1)
}, timeoutMs)
try {
  // A throw while the module loads is a failed cold start: reported like a failed invocation.
  const handler = (await import(pathToFileURL(file).href))[exportName]
  if (typeof handler !== 'function') usage(`${file} has no exported function "${exportName}"`)
  const result = await handler(event, context)
  clearTimeout(timer)
  // Synchronous, so that the result is out before a stop.
  writeSync(1, `${JSON.stringify(result ?? null)}\n`)
  if (stopOnReturn) process.kill(process.pid, 'SIGSTOP')
} catch (error) {
  clearTimeout(timer)
  // The shape Lambda reports for an unhandled error.
  const report = { errorType: error?.name ?? typeof error, errorMessage: error?.message ?? String(error) }
  writeSync(1, `${JSON.stringify(report)}\n`)
  process.stderr.write(`${error?.stack ?? error}\n`)
  process.exitCode = 1
}
