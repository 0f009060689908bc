/**
 * `sluice secret generate | check | aws-json`: secrets for a deployment, checked by the rules
 * the functions apply at their first request. Needs no config and no database.
 */
import { deployEnvProblems, generateSecret } from '../../platforms/secrets.js'
import { EXIT, type ExitCode } from '../errors.js'

export const SECRET_USAGE = 'usage: sluice secret generate | check | aws-json'

export const secretHelp = `${SECRET_USAGE}

  generate    print a new SLUICE_SECRET (32 random bytes, base64url, 43 characters)
  check       check DATABASE_URL and SLUICE_SECRET (and CRON_SECRET if set) in the environment
  aws-json    check them, then print them as the JSON secret serverless.yml reads:
                sluice secret aws-json | aws secretsmanager create-secret \\
                  --name sluice/dev --secret-string file:///dev/stdin

Exits 0 when done, 2 (naming each problem on stderr) when a secret breaks the rules.
`

export interface SecretIo {
  env: Record<string, string | undefined>
  out(text: string): void
  err(text: string): void
}

/** Runs `sluice secret <args>`; returns the exit code. */
export function runSecret(args: readonly string[], io: SecretIo): ExitCode {
  const [command, ...rest] = args
  if (command === '--help' || command === '-h') {
    io.out(secretHelp)
    return EXIT.OK
  }
  if (command === undefined || rest.length > 0) {
    io.err(`${SECRET_USAGE}\n`)
    return EXIT.USAGE
  }
  if (command === 'generate') {
    io.out(`${generateSecret()}\n`)
    return EXIT.OK
  }
  if (command !== 'check' && command !== 'aws-json') {
    io.err(`Unknown secret command "${command}".\n${SECRET_USAGE}\n`)
    return EXIT.USAGE
  }
  const problems = deployEnvProblems(io.env, { require: true })
  if (problems.length > 0) {
    io.err(`${problems.join('\n')}\n`)
    return EXIT.USAGE
  }
  if (command === 'check') io.out('DATABASE_URL and SLUICE_SECRET are fine.\n')
  else
    io.out(`${JSON.stringify({ DATABASE_URL: io.env.DATABASE_URL, SLUICE_SECRET: io.env.SLUICE_SECRET })}\n`)
  return EXIT.OK
}
