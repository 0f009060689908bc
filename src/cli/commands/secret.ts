/**
 * `sluice secret generate | check | aws-json`: secrets for a deployment, checked by the rules
 * the functions apply at their first request. Needs no config and no database.
 */
import { deployEnvProblems, generateSecret, secretAdvice } from '../../platforms/secrets.js'
import { type Parsed, parseCommandArgs } from '../args.js'
import { EXIT, type ExitCode, explain, UsageError } from '../errors.js'
import { formatError } from '../output.js'

const SUBCOMMANDS = ['generate', 'check', 'aws-json'] as const

export const secretHelp = {
  name: 'secret',
  summary: "generate | check | aws-json: a deployment's secrets (no config, no database)",
  usage: 'sluice secret generate | check | aws-json',
  help: `  generate    print a new SLUICE_SECRET (32 random bytes, base64url, 43 characters)
  check       check DATABASE_URL and SLUICE_SECRET (and CRON_SECRET if set) in the environment
  aws-json    check them, then print them as the JSON secret serverless.yml reads:
                SLUICE_SECRET=$(sluice secret generate) DATABASE_URL=postgres://… \\
                  sluice secret aws-json | aws secretsmanager create-secret \\
                  --name <service>/dev --secret-string file:///dev/stdin

Exits 0 when done, 2 (naming each problem on stderr) when a secret breaks the rules.
With --json: generate prints {"secret": "…"}, check prints {"passed": true|false, "problems": […]}
(and aws-json the same when the checks fail; its output is JSON either way).`,
}

export interface SecretIo {
  env: Record<string, string | undefined>
  out(text: string): void
  err(text: string): void
}

/**
 * Runs `sluice secret <args>` on its own (scripts/secret.ts): the flags every command takes,
 * --help, and errors printed as the CLI prints them. Returns the exit code.
 */
export function runSecret(args: readonly string[], io: SecretIo): ExitCode {
  let json = false
  try {
    const parsed = parseCommandArgs('secret', args, {})
    json = parsed.globals.json
    if (parsed.globals.help) {
      io.out(`Usage: ${secretHelp.usage}\n\n${secretHelp.help}\n`)
      return EXIT.OK
    }
    return secretCommand(parsed, io)
  } catch (error) {
    const { exitCode, ...explained } = explain(error)
    if (json) io.out(`${JSON.stringify({ error: explained })}\n`)
    io.err(`${formatError({ exitCode, ...explained })}\n`)
    return exitCode
  }
}

/** Runs `sluice secret <subcommand>` once its flags are parsed (--help is answered before); returns the exit code. */
export function secretCommand(parsed: Pick<Parsed, 'positionals' | 'globals'>, io: SecretIo): ExitCode {
  const [command, ...rest] = parsed.positionals
  const json = parsed.globals.json
  const usage = `Usage: ${secretHelp.usage}. Run \`sluice secret --help\`.`
  if (command === undefined) throw new UsageError('Which secret command?', usage)
  if (!(SUBCOMMANDS as readonly string[]).includes(command))
    throw new UsageError(`Unknown secret command "${command}".`, usage)
  if (rest.length > 0)
    throw new UsageError(`\`sluice secret ${command}\` takes no argument "${rest[0]}".`, usage)
  if (command === 'generate') {
    const secret = generateSecret()
    io.out(`${json ? JSON.stringify({ secret }) : secret}\n`)
    return EXIT.OK
  }
  const problems = deployEnvProblems(io.env, { require: true })
  if (problems.length > 0) {
    io.err(`${problems.join('\n')}\n`)
    if (!io.env.SLUICE_SECRET)
      io.err('hint: set one first: SLUICE_SECRET=$(npx sluice secret generate) npx sluice secret …\n')
    else {
      const advice = secretAdvice(problems)
      if (advice) io.err(`hint: ${advice}\n`)
    }
    if (json) io.out(`${JSON.stringify({ passed: false, problems })}\n`)
    return EXIT.USAGE
  }
  if (command === 'check')
    io.out(
      json
        ? `${JSON.stringify({ passed: true, problems })}\n`
        : `${io.env.CRON_SECRET ? 'DATABASE_URL, SLUICE_SECRET and CRON_SECRET' : 'DATABASE_URL and SLUICE_SECRET'} are fine.\n`,
    )
  else
    io.out(`${JSON.stringify({ DATABASE_URL: io.env.DATABASE_URL, SLUICE_SECRET: io.env.SLUICE_SECRET })}\n`)
  return EXIT.OK
}
