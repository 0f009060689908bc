/**
 * The files `sluice init` writes, as plain text: what you read here is what lands in the
 * project, for its owner to edit. `app` is the import specifier of the module exporting the
 * app's `sluice`, as seen from the file being written.
 */

/** A `sluice.config` skeleton: one example job, the `sluice` the functions import, and the CLI's default export. */
export function configSkeleton(typescript: boolean): string {
  const param = typescript ? '{ database }: { database: string }' : '{ database }'
  return `/**
 * Your Sluice app: its jobs, and the \`sluice\` the deployed functions import.
 *
 * The \`sluice\` CLI (migrate, dev, enqueue, drain, status) loads this file and calls its default
 * export with the database it chose: DATABASE_URL, or without it (\`sluice dev\`) an embedded
 * PGlite database (\`npm install --save-dev @electric-sql/pglite\`).
 */
import { createSluice, defineJob } from 'sluice'
// zod/mini keeps the deployed functions lean; zod classic (\`from 'zod'\`) works as well.
import * as z from 'zod/mini'

/** An example job: replace it with your own. Enqueue it with \`sluice enqueue send-welcome '{"email":"ada@example.com"}'\`. */
export const sendWelcome = defineJob({
  name: 'send-welcome',
  queue: 'emails',
  input: z.object({ email: z.email() }),
  run: async (input, ctx) => {
    console.log(\`welcome, \${input.email} (attempt \${ctx.attempt})\`)
  },
})

const jobs = [sendWelcome]

/** What the functions import. The database is DATABASE_URL, read on first use (never at import). */
export const sluice = createSluice({ jobs })

/** What the CLI loads. */
export default (${param}) => createSluice({ database, jobs })
`
}

export function awsDrain(app: string): string {
  return `// The drain, behind a Lambda function URL: a POST (bearer SLUICE_SECRET, or a signed request)
// claims and runs jobs within the invocation's remaining time, and answers what it did.
// \`sluice build\` bundles it to dist/functions/aws/drain.mjs; serverless.yml deploys that.
import { drainHandler } from 'sluice/aws-lambda'
import { sluice } from '${app}'

export const handler = drainHandler(sluice)
`
}

export function awsMaintain(app: string): string {
  return `// Maintenance on an EventBridge schedule (serverless.yml: every minute): reaps expired leases,
// promotes delayed jobs, runs recurring tasks, prunes, and wakes drains for queues with work.
// Overlapping or skipped runs are safe.
import { maintainHandler } from 'sluice/aws-lambda'
import { sluice } from '${app}'

export const handler = maintainHandler(sluice)
`
}

export function awsApi(app: string): string {
  return `// The HTTP API behind an API Gateway HTTP API: POST /jobs/:name (enqueue), POST /events/:topic
// (publish), /drain, /maintain, /health and /metrics. Add \`{ dashboard: true }\` to serve the
// operator's dashboard at /dashboard too (it makes the bundle larger).
import { apiHandler } from 'sluice/aws-lambda'
import { sluice } from '${app}'

export const handler = apiHandler(sluice)
`
}

export function serverlessYml(service: string): string {
  const fn = (name: string, lines: string) => `  ${name}:
${lines}
    package:
      patterns:
        - "!**"
        - dist/functions/aws/${name}.mjs
        - dist/functions/aws/${name}.mjs.map`
  return `# AWS Lambda deployment of this project's Sluice functions, with osls (npx osls, the open-source
# fork of Serverless Framework v3) or serverless v3. Written by \`sluice init aws\`: yours to edit.
#
#   SLUICE_SECRET=$(npx sluice secret generate) DATABASE_URL=postgres://… \\
#     npx sluice secret aws-json | aws secretsmanager create-secret --name ${service}/dev --secret-string file:///dev/stdin
#   DATABASE_URL=postgres://… npx sluice migrate
#   npx sluice build && npx osls deploy
#
# Each function ships its own bundle and source map from dist/functions/aws (\`sluice build\`), nothing else.
service: ${service}

frameworkVersion: ">=3"

params:
  default:
    # The Secrets Manager secret (JSON with DATABASE_URL and SLUICE_SECRET) of this stage.
    secretId: ${service}/\${sls:stage}

custom:
  # CloudFormation dynamic references, resolved at deploy time: no secret is ever in the template.
  secret: "{{resolve:secretsmanager:\${param:secretId}:SecretString"

provider:
  name: aws
  runtime: nodejs24.x
  architecture: arm64
  memorySize: 512
  logRetentionInDays: 14
  environment:
    DATABASE_URL: \${self:custom.secret}:DATABASE_URL}}
    SLUICE_SECRET: \${self:custom.secret}:SLUICE_SECRET}}
    # CloudFormation resolves the references again only when it updates a function: after changing
    # the secret, deploy with --param="secretVersion=<its VersionId>".
    SLUICE_SECRET_VERSION: \${param:secretVersion, 'initial'}
    SLUICE_SCHEMA: \${env:SLUICE_SCHEMA, 'sluice'}
    # Stack traces name your source files and lines (each bundle ships its .map).
    NODE_OPTIONS: --enable-source-maps

package:
  individually: true

functions:
${fn(
  'drain',
  `    # POST to the function URL drains; the budget is capped by the invocation's remaining time.
    handler: dist/functions/aws/drain.handler
    timeout: 60
    url: true`,
)}

${fn(
  'maintain',
  `    # Maintenance every minute; it wakes drains through the drain's function URL.
    handler: dist/functions/aws/maintain.handler
    timeout: 60
    environment:
      SLUICE_DRAIN_URL:
        Fn::GetAtt: [DrainLambdaFunctionUrl, FunctionUrl]
    events:
      - schedule: rate(1 minute)`,
)}

${fn(
  'api',
  `    # Enqueue, publish, health and metrics behind an HTTP API (API Gateway caps requests at 30 s).
    handler: dist/functions/aws/api.handler
    timeout: 29
    environment:
      SLUICE_DRAIN_URL:
        Fn::GetAtt: [DrainLambdaFunctionUrl, FunctionUrl]
    events:
      - httpApi: "*"`,
)}
`
}

export function vercelFunction(app: string): string {
  return `// Every /api/* route as one Vercel Function on the Node.js runtime: /api/jobs/:name (enqueue),
// /api/events/:topic (publish), /api/health and /api/metrics, however many path segments they
// have. /api/drain and /api/maintain have lean functions of their own (drain and maintain, beside
// this file), which Vercel routes to first. Add \`dashboard: true\` to serve the operator's
// dashboard at /api/dashboard (it makes this bundle larger, not the drain's).
// \`sluice build --vercel\` (vercel.json's buildCommand) bundles it into .vercel/output as api/sluice,
// with maxDuration below as the function's limit.
import { vercelHandlers } from 'sluice/vercel'
import { sluice } from '${app}'

/** Seconds: Hobby allows up to 60, Pro more. */
export const maxDuration = 60

export const { GET, POST } = vercelHandlers(sluice, { maxDurationMs: maxDuration * 1000 })
`
}

export function vercelDrain(app: string): string {
  return `// The drain as a Vercel Function of its own at /api/drain: a POST (bearer SLUICE_SECRET, or a
// signed request) claims and runs jobs within maxDuration, and answers what it did. It bundles
// the drain only: no admin API, no dashboard, so it starts faster.
import { vercelDrain } from 'sluice/vercel'
import { sluice } from '${app}'

/** Seconds: the function's limit, which the drain's time budget follows. Hobby allows up to 60. */
export const maxDuration = 60

export const { POST } = vercelDrain(sluice, { maxDurationMs: maxDuration * 1000 })
`
}

export function vercelMaintain(app: string): string {
  return `// Maintenance as a Vercel Function of its own at /api/maintain, which Vercel cron (vercel.json)
// calls every minute with Authorization: Bearer $CRON_SECRET: reaps expired leases, runs recurring
// tasks, prunes, and wakes drains for queues with work. Overlapping or skipped runs are safe.
import { vercelMaintain } from 'sluice/vercel'
import { sluice } from '${app}'

/** Seconds: the function's limit. */
export const maxDuration = 60

export const { GET, POST } = vercelMaintain(sluice)
`
}

export function vercelJson(buildCommand: string | undefined, cronPath: string): string {
  const config: Record<string, unknown> = { $schema: 'https://openapi.vercel.sh/vercel.json' }
  if (buildCommand) Object.assign(config, { framework: null, buildCommand })
  // Vercel cron sends GET with Authorization: Bearer $CRON_SECRET, which /maintain accepts.
  config.crons = [{ path: cronPath, schedule: '* * * * *' }]
  return `${JSON.stringify(config, null, 2)}\n`
}

export function nextRoute(app: string): string {
  return `// Sluice's HTTP API in this Next.js app, under /api/sluice: POST /api/sluice/jobs/:name
// (enqueue), POST /api/sluice/events/:topic (publish), /api/sluice/drain, /api/sluice/maintain
// (Vercel cron, vercel.json), /api/sluice/health and /api/sluice/metrics.
// Nothing here reads the environment at import: \`next build\` needs neither DATABASE_URL nor
// SLUICE_SECRET; the first request checks them.
import { vercelHandlers } from 'sluice/vercel'
import { sluice } from '${app}'

export const runtime = 'nodejs'
export const dynamic = 'force-dynamic'
/** Seconds: the function's limit on Vercel; the drain's time budget follows it. */
export const maxDuration = 60

export const { GET, POST } = vercelHandlers(sluice, { basePath: '/api/sluice', maxDurationMs: maxDuration * 1000 })
`
}

export function nextDrainRoute(app: string): string {
  return `// The drain as a route of its own, /api/sluice/drain (Next.js prefers it to the catch-all
// route beside it): a POST (bearer SLUICE_SECRET, or a signed request) runs jobs within
// maxDuration. On Vercel each route is a function, and this one bundles the drain only.
import { vercelDrain } from 'sluice/vercel'
import { sluice } from '${app}'

export const runtime = 'nodejs'
export const dynamic = 'force-dynamic'
/** Seconds: the function's limit on Vercel; the drain's time budget follows it. */
export const maxDuration = 60

export const { POST } = vercelDrain(sluice, { maxDurationMs: maxDuration * 1000 })
`
}

export function nextMaintainRoute(app: string): string {
  return `// Maintenance as a route of its own, /api/sluice/maintain, which Vercel cron (vercel.json) calls
// every minute with Authorization: Bearer $CRON_SECRET. It bundles maintenance only.
import { vercelMaintain } from 'sluice/vercel'
import { sluice } from '${app}'

export const runtime = 'nodejs'
export const dynamic = 'force-dynamic'
export const maxDuration = 60

export const { GET, POST } = vercelMaintain(sluice)
`
}

export function contractsSkeleton(): string {
  return `/**
 * Job contracts: what enqueueing needs (name, queue, input schema), without the handlers, so
 * that an edge function can enqueue without bundling your handlers' code. Keep them in step with
 * your jobs, or define each job from its contract: \`defineJob({ ...sendWelcomeContract, run })\`.
 */
import { defineContract } from 'sluice/edge'
import * as z from 'zod/mini'

export const sendWelcomeContract = defineContract({
  name: 'send-welcome',
  queue: 'emails',
  input: z.object({ email: z.email() }),
})

export const contracts = [sendWelcomeContract]
`
}

export function cloudflareWorker(contracts: string, typescript: boolean): string {
  const types = typescript
    ? `
interface Env {
  DATABASE_URL: string
  SLUICE_SECRET?: string
  SLUICE_SCHEMA?: string
  SLUICE_DRAIN_URL?: string
  [name: string]: unknown
}

interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void
}
`
    : ''
  const sig = typescript
    ? 'async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>'
    : 'async fetch(request, env, ctx)'
  const appType = typescript ? ': ReturnType<typeof createEnqueueApp> | undefined' : ''
  const entryType = typescript ? ': entry is [string, string]' : ''
  return `// Enqueue and publish as a Cloudflare Worker: POST /jobs/:name with { input, delay?, runAt?, priority? }
// and POST /events/:topic with { payload, eventId?, delay? }, bearer SLUICE_SECRET or a signed
// request, over Neon's HTTP driver. Job contracts only: no handler code, no Node built-ins (\`sluice
// build\` refuses an edge bundle that imports one). The wake-up sent to SLUICE_DRAIN_URL after an
// enqueue goes to ctx.waitUntil, so that it outlives the answer. wrangler.toml deploys the bundle.
import { createEdgeClient, createEnqueueApp, seeWakeupsOut } from 'sluice/edge'
import { contracts } from '${contracts}'
${types}
let app${appType}

export default {
  ${sig} {
    const vars = Object.fromEntries(
      Object.entries(env).filter((entry)${entryType} => typeof entry[1] === 'string'),
    )
    app ??= createEnqueueApp(createEdgeClient({ database: env.DATABASE_URL, jobs: contracts, env: vars }), {
      env: vars,
    })
    const response = await app.fetch(request)
    await seeWakeupsOut((promise) => ctx.waitUntil(promise))
    return response
  },
}
`
}

export function wranglerToml(name: string): string {
  return `# Cloudflare Workers deployment of this project's enqueue and publish routes.
# Written by \`sluice init cloudflare\`: yours to edit.
#   npx sluice build
#   npx wrangler secret put DATABASE_URL
#   npx sluice secret generate | npx wrangler secret put SLUICE_SECRET
#   npx wrangler deploy
# The worker is the bundle \`sluice build\` writes, uploaded as it is with its source map.
name = "${name}-enqueue"
main = "dist/functions/cloudflare/worker.js"
compatibility_date = "2025-07-18"
no_bundle = true
upload_source_maps = true

[vars]
SLUICE_SCHEMA = "sluice"
# Your drain function's URL (AWS Lambda function URL or https://<app>.vercel.app/api/drain); unset: no wake-ups.
# SLUICE_DRAIN_URL = "https://example.lambda-url.eu-west-1.on.aws/"
`
}
