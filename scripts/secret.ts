/**
 * `npm run -s secret -- <command>`: secrets for a deployment, checked by the rules the functions
 * apply at every cold start.
 *
 *   generate    print a new SLUICE_SECRET (32 random bytes, base64url)
 *   check       check DATABASE_URL and SLUICE_SECRET (and CRON_SECRET if set) in the environment
 *   aws-json    check them, then print them as the JSON secret serverless.yml reads:
 *               npm run -s secret -- aws-json | aws secretsmanager create-secret \
 *                 --name sluice/dev --secret-string file:///dev/stdin
 *
 * Exits 0 when done, 2 (naming each problem on stderr) when a secret breaks the rules.
 */
import { deployEnvProblems, generateSecret } from '../src/platforms/secrets.js'

const [command, ...rest] = process.argv.slice(2)
const usage = 'usage: npm run -s secret -- generate | check | aws-json'

function checked(): void {
  const problems = deployEnvProblems(process.env, { require: true })
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n`)
    process.exit(2)
  }
}

if (rest.length > 0 || command === undefined) {
  process.stderr.write(`${usage}\n`)
  process.exit(2)
} else if (command === 'generate') {
  process.stdout.write(`${generateSecret()}\n`)
} else if (command === 'check') {
  checked()
  process.stdout.write('DATABASE_URL and SLUICE_SECRET are fine.\n')
} else if (command === 'aws-json') {
  checked()
  const { DATABASE_URL, SLUICE_SECRET } = process.env
  process.stdout.write(`${JSON.stringify({ DATABASE_URL, SLUICE_SECRET })}\n`)
} else {
  process.stderr.write(`unknown command "${command}"\n${usage}\n`)
  process.exit(2)
}
