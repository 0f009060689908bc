/**
 * The AWS artifacts as a user deploys them: `osls package` (the pinned Serverless Framework v3
 * fork) run offline on serverless.yml, assertions on the CloudFormation template and the zips,
 * then each packaged handler run from its unzipped package by scripts/lambda-local.mjs with the
 * event shapes Lambda delivers, one of them frozen at return as Lambda freezes a function.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { exampleSubscribers } from '../../examples/jobs.js'
import { setup } from '../../examples/schema.js'
import { build } from '../../scripts/build.js'
import { createSluice } from '../../src/index.js'
import { root } from '../helpers/build.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'
import { httpEventV2, scheduledEvent } from '../helpers/lambda.js'
import { unzip, zipEntries } from '../helpers/zip.js'
import { invokeLocal, OFFLINE_ENV, type Received, run, startDrainStub, waitStopped } from './support.js'

// What a user has in their shell when they package: these must not reach the template.
const CANARY_URL = 'postgres://sluice:plaintext-canary-password@db.example.com/app'
const CANARY_SECRET = 'plaintext-canary-secret-0123456789'
const SECRET = 'deploy-test-secret-0123456789'
const FUNCTIONS = ['drain', 'maintain', 'api'] as const

interface Resource {
  Type: string
  Properties: Record<string, unknown>
}
interface LambdaProps {
  Runtime: string
  Handler: string
  Timeout: number
  Environment: { Variables: Record<string, unknown> }
}

let env: TestSluice
let dir: string
let template: { Resources: Record<string, Resource> }
let state: string

const resources = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type)
const lambda = (name: string) =>
  template.Resources[`${name[0]!.toUpperCase()}${name.slice(1)}LambdaFunction`]!
    .Properties as unknown as LambdaProps

/** The environment a packaged function gets: its plain template variables plus the test's values. */
function functionEnv(name: string, extra: Record<string, string> = {}): Record<string, string> {
  const vars = lambda(name).Environment.Variables
  const plain = Object.fromEntries(
    Object.entries(vars).filter(([, v]) => typeof v === 'string' && !v.startsWith('{{resolve:')),
  ) as Record<string, string>
  return {
    ...plain,
    DATABASE_URL: databaseUrl,
    SLUICE_SCHEMA: env.schema,
    SLUICE_SECRET: SECRET,
    AWS_LAMBDA_FUNCTION_NAME: `sluice-dev-${name}`,
    ...extra,
  }
}

beforeAll(async () => {
  env = await makeSluice({ jobs: [] })
  await setup(env.sluice)
  // A service directory as a user has it: serverless.yml and the build's output under dist/.
  await mkdir(join(root, 'node_modules/.cache'), { recursive: true })
  dir = await mkdtemp(join(root, 'node_modules/.cache/sluice-deploy-aws-'))
  await copyFile(join(root, 'serverless.yml'), join(dir, 'serverless.yml'))
  await build({
    root,
    outDir: join(dir, 'dist'),
    library: false,
    functions: FUNCTIONS.map((f) => `functions/aws/${f}.ts`),
    log: () => {},
  })
  await run(process.execPath, [join(root, 'node_modules/osls/bin/serverless.js'), 'package'], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      ...OFFLINE_ENV,
      DATABASE_URL: CANARY_URL,
      SLUICE_SECRET: CANARY_SECRET,
    },
  })
  template = JSON.parse(
    await readFile(join(dir, '.serverless/cloudformation-template-update-stack.json'), 'utf8'),
  )
  state = await readFile(join(dir, '.serverless/serverless-state.json'), 'utf8')
  for (const name of FUNCTIONS) {
    await mkdir(join(dir, 'run', name), { recursive: true })
    await unzip(join(dir, `.serverless/${name}.zip`), join(dir, 'run', name))
  }
}, 120_000)
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
  await env?.cleanup()
})

describe('serverless.yml, packaged', () => {
  test('every function runs on the current Node.js LTS runtime, with source maps on', () => {
    for (const name of FUNCTIONS) {
      expect(lambda(name).Runtime, name).toBe('nodejs24.x')
      expect(lambda(name).Handler, name).toBe(`dist/functions/aws/${name}.handler`)
      expect(lambda(name).Environment.Variables.NODE_OPTIONS, name).toBe('--enable-source-maps')
    }
  })

  test('no secret reaches the template or the state file: CloudFormation resolves them at deploy', () => {
    const text = JSON.stringify(template)
    for (const secret of [CANARY_URL, CANARY_SECRET, 'plaintext-canary']) {
      expect(text.includes(secret), `template holds ${secret}`).toBe(false)
      expect(state.includes(secret), `serverless-state.json holds ${secret}`).toBe(false)
    }
    for (const name of FUNCTIONS) {
      const vars = lambda(name).Environment.Variables
      expect(vars.DATABASE_URL, name).toBe('{{resolve:secretsmanager:sluice/dev:SecretString:DATABASE_URL}}')
      expect(vars.SLUICE_SECRET, name).toBe(
        '{{resolve:secretsmanager:sluice/dev:SecretString:SLUICE_SECRET}}',
      )
    }
  })

  test('the drain has a function URL, maintain a one-minute schedule, api an HTTP API', () => {
    const [url] = resources('AWS::Lambda::Url')
    expect(resources('AWS::Lambda::Url')).toHaveLength(1)
    expect(url!.Properties).toMatchObject({
      AuthType: 'NONE',
      TargetFunctionArn: { 'Fn::GetAtt': ['DrainLambdaFunction', 'Arn'] },
    })
    const rules = resources('AWS::Events::Rule')
    expect(rules).toHaveLength(1)
    expect(rules[0]!.Properties).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' })
    expect(JSON.stringify(rules[0]!.Properties.Targets)).toContain('MaintainLambdaFunction')
    expect(resources('AWS::ApiGatewayV2::Api')).toHaveLength(1)
    for (const name of ['maintain', 'api'])
      expect(lambda(name).Environment.Variables.SLUICE_DRAIN_URL, name).toEqual({
        'Fn::GetAtt': ['DrainLambdaFunctionUrl', 'FunctionUrl'],
      })
    expect(lambda('api').Timeout).toBe(29)
  })

  test('each zip holds its handler and its source map, nothing else', async () => {
    for (const name of FUNCTIONS) {
      const entries = await zipEntries(join(dir, `.serverless/${name}.zip`))
      expect(entries.sort(), name).toEqual([
        `dist/functions/aws/${name}.mjs`,
        `dist/functions/aws/${name}.mjs.map`,
      ])
    }
  })
})

/**
 * POSTs `body` to `path` of the packaged api handler, stopped (as Lambda freezes it) the moment
 * it returns, and answers its status code and the requests a drain stub received once `expected`
 * of them arrived: whatever the handler had not sent by the freeze stays unsent, so a request
 * that arrives while it is stopped left before the freeze.
 */
async function frozenApiCall(
  path: string,
  body: string,
  expected: number,
): Promise<{ statusCode: number; received: Received[] }> {
  const drain = await startDrainStub()
  try {
    const invocation = invokeLocal(
      'dist/functions/aws/api.handler',
      httpEventV2('POST', path, { body, headers: { authorization: `Bearer ${SECRET}` } }),
      {
        cwd: join(dir, 'run/api'),
        env: functionEnv('api', { SLUICE_DRAIN_URL: drain.url }),
        stopOnReturn: true,
      },
    )
    try {
      const result = (await invocation.result) as { statusCode: number; body: string }
      expect(result.statusCode, invocation.stderr()).toBe(202)
      await waitStopped(invocation.child)
      await vi.waitFor(() => expect(drain.received).toHaveLength(expected), { timeout: 5_000, interval: 20 })
      return { statusCode: result.statusCode, received: drain.received }
    } finally {
      invocation.child.kill('SIGKILL')
    }
  } finally {
    await drain.close()
  }
}

describe('the packaged handlers, with the events Lambda delivers', () => {
  test('api: an enqueue wakes the drain before the function can be frozen', async () => {
    const body = JSON.stringify({ input: { userId: 'u1', email: 'u1@example.com' } })
    const { received } = await frozenApiCall('/jobs/welcome-email', body, 1)
    expect(received.map((r) => [r.method, JSON.parse(r.body).queues])).toEqual([['POST', ['emails']]])
    expect(received[0]!.headers['sluice-signature']).toBeDefined()
  })

  test("api: a publish wakes its subscribers' drains before the function can be frozen", async () => {
    // The example's subscriptions, as its `sluice migrate` records them.
    const app = createSluice({
      database: databaseUrl,
      schema: env.schema,
      jobs: [],
      subscribers: Object.values(exampleSubscribers()),
    })
    await app.syncSubscriptions()
    await app.close()
    const body = JSON.stringify({ payload: { orderId: 'o_1', customer: 'ada@example.com', total: 42 } })
    const { received } = await frozenApiCall('/events/orders.created', body, 2)
    expect(received.map((r) => JSON.parse(r.body).queues[0]).sort()).toEqual(['events', 'fulfilment'])
  })

  test('drain: a function URL POST drains the queue', async () => {
    const { result, stderr } = invokeLocal(
      'dist/functions/aws/drain.handler',
      httpEventV2('POST', '/', {
        body: '{"queues":["emails"]}',
        headers: { authorization: `Bearer ${SECRET}` },
      }),
      { cwd: join(dir, 'run/drain'), env: functionEnv('drain') },
    )
    const answer = (await result) as { statusCode: number; body: string }
    expect(answer.statusCode, stderr()).toBe(200)
    expect(JSON.parse(answer.body)).toMatchObject({ completed: 1, stoppedBy: 'empty' })
  })

  test('maintain: an EventBridge scheduled event runs maintenance', async () => {
    const { result, stderr } = invokeLocal('dist/functions/aws/maintain.handler', scheduledEvent(), {
      cwd: join(dir, 'run/maintain'),
      env: functionEnv('maintain'),
    })
    const report = (await result) as { tasks: { task: string }[] }
    expect(report.tasks?.length, stderr()).toBeGreaterThan(0)
  })

  test('a bad secret fails the first request that needs it; the log names the error and its source line', async () => {
    const { child, result, stderr } = invokeLocal(
      'dist/functions/aws/api.handler',
      httpEventV2('POST', '/drain', { body: '{}', headers: { authorization: 'Bearer too-short-secret' } }),
      {
        cwd: join(dir, 'run/api'),
        env: functionEnv('api', { SLUICE_SECRET: 'too-short' }),
        stopOnReturn: true,
      },
    )
    try {
      // Created without checking the environment (a build has none); the request that needs it fails.
      expect(await result).toMatchObject({ statusCode: 500 })
      expect(stderr()).toMatch(/ConfigError: SLUICE_SECRET must be at least 16 characters/)
      // Source-mapped: the stack names our source files, not the bundle.
      expect(stderr()).toMatch(/src\/http\/guards\.ts:\d+/)
    } finally {
      // Stopped the moment the handler returned: a frozen process never exits on its own.
      child.kill('SIGKILL')
    }
  })
})
