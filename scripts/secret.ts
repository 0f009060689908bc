/** `npm run -s secret -- <command>`: the same as `sluice secret <command>` (src/cli/commands/secret.ts). */
import { runSecret } from '../src/cli/commands/secret.js'

process.exitCode = runSecret(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
})
