import { describe, expect, test } from 'vitest'
import * as z from 'zod'
import { parseCommandArgs } from '../../src/cli/args.js'
import type { RunContext } from '../../src/cli/command.js'
import { drain } from '../../src/cli/commands/drain.js'
import { enqueue } from '../../src/cli/commands/enqueue.js'
import { CliError, EXIT } from '../../src/cli/errors.js'
import { formatRun } from '../../src/cli/job-log.js'
import type { JobRun } from '../../src/drain/options.js'
import { defineJob, defineSubscriber } from '../../src/index.js'
import { deployEnvProblems } from '../../src/platforms/secrets.js'
import { exampleConfig, runCli } from '../helpers/cli.js'

// What the CLI prints, checked without a database: each command's parse, run and render.

/** The error `fn` throws (or the promise rejects with), as a CliError. */
async function thrown(fn: () => unknown): Promise<CliError> {
  try {
    await fn()
  } catch (error) {
    expect(error).toBeInstanceOf(CliError)
    return error as CliError
  }
  throw new Error('expected an error')
}

describe('the drain log', () => {
  const run = (outcome: JobRun['outcome']): JobRun => ({
    id: '7',
    name: 'ping',
    queue: 'default',
    attempt: 1,
    maxAttempts: 3,
    outcome,
    durationMs: 29,
  })

  test('a suspended run (a durable step sleeps or waits) is not reported as dead-lettered', () => {
    const line = formatRun(run('suspended'), false)
    expect(line).toContain('suspended')
    expect(line).not.toMatch(/failed|dead-lettered/)
  })

  test('every outcome has its own words', () => {
    const lines = (['completed', 'expired', 'retrying', 'dead-lettered', 'suspended'] as const).map((o) =>
      formatRun(run(o), false),
    )
    expect(new Set(lines).size).toBe(lines.length)
    expect(lines[3]).toContain('dead-lettered')
  })
})

describe('the drain summary', () => {
  const summary = (remainingReady: number, more: Partial<Record<string, number>> = {}) =>
    drain.render({
      invocationId: 'drn_1',
      queues: ['default'],
      claimed: 2,
      completed: 1,
      failed: 0,
      retried: 0,
      deadLettered: 0,
      expired: 0,
      handedBack: 0,
      lostLeases: 0,
      durationMs: 40,
      stoppedBy: 'stopped',
      remainingReady,
      runs: [],
      runsNotListed: 0,
      ...more,
    })

  test('one due job left is singular, two are plural', () => {
    expect(summary(1)).toContain('Stopped because it was interrupted; 1 due job left.')
    expect(summary(2)).toContain('; 2 due jobs left.')
  })

  test('one lost lease and one unlisted run are singular', () => {
    const text = summary(0, { lostLeases: 1, runsNotListed: 1 })
    expect(text).toContain('1 lost lease.')
    expect(text).not.toContain('1 lost leases')
    expect(text).toContain('… and 1 more run')
    expect(text).not.toContain('1 more runs')
  })
})

describe('enqueue flags', () => {
  test("a job without its input is told to quote that job's input, not some other job's", async () => {
    const error = await thrown(() =>
      enqueue.parse(parseCommandArgs('enqueue', ['send-welcome'], enqueue.options)),
    )
    expect(error.exitCode).toBe(EXIT.USAGE)
    expect(error.message).toBe("enqueue needs send-welcome's input, as JSON.")
    expect(error.hint).toContain(`sluice enqueue send-welcome '{"key": "value"}'`)
    const none = await thrown(() => enqueue.parse(parseCommandArgs('enqueue', [], enqueue.options)))
    expect(none.hint).toContain('sluice enqueue <job>')
  })

  test('a negative --delay says it must be zero or more', async () => {
    const error = await thrown(() =>
      enqueue.parse(parseCommandArgs('enqueue', ['ping', '1', '--delay=-5'], enqueue.options)),
    )
    expect(error.exitCode).toBe(EXIT.USAGE)
    expect(error.message).toContain('--delay')
    expect(error.message).toMatch(/zero or more/)
  })

  test("`--delay -5` is the CLI's own usage error, not parseArgs' text", async () => {
    const error = await thrown(() =>
      parseCommandArgs('enqueue', ['ping', '1', '--delay', '-5'], enqueue.options),
    )
    expect(error.exitCode).toBe(EXIT.USAGE)
    expect(error.message).not.toMatch(/ambiguous|XYZ|Option '/)
    expect(error.message).toContain('--delay')
    expect(`${error.message} ${error.hint}`).toContain('--delay=-5')
  })

  test('a flag with no value, a value for a switch and an unknown flag each get a sentence', async () => {
    const missing = await thrown(() => parseCommandArgs('enqueue', ['ping', '1', '--delay'], enqueue.options))
    expect(missing.message).toBe('--delay needs a value.')
    const valued = await thrown(() =>
      parseCommandArgs('enqueue', ['ping', '1', '--json=yes'], enqueue.options),
    )
    expect(valued.message).toBe('--json takes no value.')
    const unknown = await thrown(() =>
      parseCommandArgs('enqueue', ['ping', '1', '--dealy', '5'], enqueue.options),
    )
    expect(unknown.message).toBe('`sluice enqueue` has no flag --dealy.')
    for (const e of [missing, valued, unknown]) {
      expect(e.exitCode).toBe(EXIT.USAGE)
      expect(e.message).not.toMatch(/Option '|ERR_PARSE/)
    }
  })
})

describe('enqueue of a name that is not a job', () => {
  const ping = defineJob({ name: 'ping', input: z.object({ n: z.number() }), run: () => {} })
  const audit = defineSubscriber({ name: 'audit', topic: 'orders.*', input: z.object({}), run: () => {} })
  const ctx = {
    sluice: {
      config: {
        jobs: new Map<string, unknown>([
          ['ping', ping],
          ['audit', audit],
        ]),
      },
    },
  } as unknown as RunContext

  test('an unknown name lists the jobs only, not the subscribers', async () => {
    const error = await thrown(() => enqueue.run(ctx, { job: 'nope', input: {} }))
    expect(error.code).toBe('UNKNOWN_JOB')
    expect(error.hint).toContain('ping (queue default)')
    expect(error.hint).not.toContain('audit')
  })

  test('a subscriber says its jobs come from publishing to its topic', async () => {
    const error = await thrown(() => enqueue.run(ctx, { job: 'audit', input: {} }))
    expect(error.exitCode).toBe(EXIT.USAGE)
    expect(error.message).toContain('"audit" is a subscriber')
    expect(error.hint).toContain('sluice publish')
    expect(error.hint).toContain('orders.*')
    expect(error.hint).not.toMatch(/takes \{/)
  })
})

test('a SLUICE_SECRET over 1,024 characters is a sentence, not zod text', () => {
  const problems = deployEnvProblems({ DATABASE_URL: 'postgres://u@h/db', SLUICE_SECRET: 'a'.repeat(1025) })
  expect(problems).toContain('SLUICE_SECRET is 1,025 characters; at most 1,024.')
  expect(problems.join('\n')).not.toMatch(/Too big|expected string/)
  const cron = deployEnvProblems({ CRON_SECRET: 'c'.repeat(2000) })
  expect(cron).toContain('CRON_SECRET is 2,000 characters; at most 1,024.')
})

describe('spawned', { timeout: 120_000 }, () => {
  test('a DATABASE_URL that is not a database URL exits 2 with a hint naming it and the forms accepted', async () => {
    const run = await runCli(['--config', exampleConfig, 'status'], { env: { DATABASE_URL: 'not-a-url' } })
    expect(run.code, run.stderr).toBe(2)
    expect(run.stderr).toMatch(/hint: .*DATABASE_URL/)
    for (const form of ['postgres://', 'postgresql://', 'pglite:memory', 'pglite:<directory>'])
      expect(run.stderr).toContain(form)
    const json = await runCli(['--config', exampleConfig, 'queues', '--json'], {
      env: { DATABASE_URL: 'mysql://u:hunter2@h/db' },
    })
    expect(json.code).toBe(2)
    expect(json.json()).toMatchObject({ error: { code: 'INVALID_CONFIG' } })
    expect(json.stdout + json.stderr).not.toContain('hunter2')
  })

  test('an unknown command lists every command --help lists, secret included', async () => {
    const [help, nope] = [await runCli(['--help']), await runCli(['nope'])]
    expect(nope.code).toBe(2)
    const listed = [...help.stdout.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]!)
    expect(listed).toContain('secret')
    const hint = nope.stderr.split('\n').find((l) => l.startsWith('hint:')) ?? ''
    for (const name of listed) expect(hint).toMatch(new RegExp(`\\b${name}\\b`))
  })
})
