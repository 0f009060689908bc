import type { AnyCommand } from './command.js'
import { devHelp } from './commands/dev.js'
import { COMMANDS } from './commands/index.js'
import { TOOLS } from './tools.js'

type Helpful = Pick<AnyCommand, 'name' | 'summary' | 'usage' | 'help'>

const ALL: Helpful[] = [devHelp, ...COMMANDS.values(), ...TOOLS.values()]

/** Every command, in the order --help lists them (the hint for an unknown command lists these). */
export const COMMAND_NAMES = ALL.map((c) => c.name)

const GLOBAL = `Flags every command takes:
  -c, --config file   the app's config (default: sluice.config.ts, .js or .mjs here)
  --data-dir dir      where the embedded database and its lock live (default ./.sluice)
  --json              print exactly one JSON document on stdout (errors too: {"error": …})
  -h, --help          this help`

export function topHelp(): string {
  const width = Math.max(...ALL.map((c) => c.name.length))
  return `sluice: run and operate a Sluice job queue.

Usage: sluice <command> [flags]

Commands:
${ALL.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

${GLOBAL}

Database: DATABASE_URL when set (postgres://…). Otherwise the embedded PGlite database in
./.sluice/pglite; while \`sluice dev\` runs here, the other commands go through it.
Schema: SLUICE_SCHEMA (default sluice).

Config: the default export is a function ({ database }) => Sluice, called with the database
above, or a Sluice instance (which then uses its own database). Optional named exports:
setup(sluice) (the app's tables, run by migrate and dev) and samples (inputs dev suggests).

Exit codes: 0 ok; 1 the operation failed; 2 usage error (bad flags, bad job input, unknown
job, no config); 3 the database is unreachable, busy, or lacks Sluice's migrations.

Run \`sluice <command> --help\` for a command's flags.`
}

export function commandHelp(command: Helpful): string {
  return `Usage: ${command.usage}

${command.help}

${GLOBAL}`
}

export function findHelp(name: string): Helpful | undefined {
  return ALL.find((c) => c.name === name)
}
