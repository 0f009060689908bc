import { latestVersion } from '../migrate/run.js'
import type { Sluice } from '../sluice.js'
import type { OptionsConfig, Parsed } from './args.js'
import { CliError, EXIT, type ExitCode, UsageError } from './errors.js'
import type { App } from './load-config.js'

/** Ctrl-C and SIGTERM, for a command that stops cleanly (see Command.interruptible). */
export interface Interrupt {
  /** Aborted at the first SIGINT or SIGTERM: stop starting work and finish what is running. */
  signal: AbortSignal
  /** Runs, for a few seconds at most, when a second signal quits at once. */
  onQuit(cleanup: () => Promise<unknown>): void
}

/** What a command runs with, in the CLI's process or inside the dev server. */
export interface RunContext {
  sluice: Sluice
  app: App
  /** Where the database is, for messages. */
  where: string
  /** Set when the command runs in the CLI's own process and is interruptible. */
  interrupt?: Interrupt
}

export interface Command<A, R> {
  name: string
  /** One line for the command list. */
  summary: string
  /** `sluice drain [--queues a,b] …` */
  usage: string
  /** The rest of `--help`: what it does, its flags, examples. */
  help: string
  options: OptionsConfig
  /** Whether Sluice's tables must exist (checked first, one statement). */
  needsSchema: boolean
  /** Validates the command line into JSON-able arguments; nothing is loaded yet. */
  parse(parsed: Parsed): A | Promise<A>
  run(ctx: RunContext, args: A): Promise<R>
  /** The result for a person (the result itself is printed with --json). */
  render(result: R): string
  exitCode?(result: R): ExitCode
  /**
   * Takes Ctrl-C itself (ctx.interrupt): the first stops it cleanly, a second quits at once.
   * Other commands are simply killed by Ctrl-C.
   */
  interruptible?: boolean
}

/** A command with its types erased, for the registry. */
export type AnyCommand = Command<unknown, unknown>

export const defineCommand = <A, R>(command: Command<A, R>): AnyCommand => command as unknown as AnyCommand

/** Throws MIGRATIONS_REQUIRED unless the schema holds every migration this Sluice knows. */
export async function requireSchema(sluice: Sluice, where: string): Promise<number> {
  const schema = sluice.config.schema
  const applied = await sluice.inspect.migrations()
  const version = Math.max(0, ...applied)
  const latest = latestVersion()
  if (applied.length === 0) {
    throw new CliError(`Sluice's tables are not in schema "${schema}" of ${where}.`, {
      code: 'MIGRATIONS_REQUIRED',
      exitCode: EXIT.DATABASE,
      hint: 'Run `sluice migrate` to create them.',
    })
  }
  if (version < latest) {
    throw new CliError(`Schema "${schema}" is at version ${version}; this Sluice needs version ${latest}.`, {
      code: 'MIGRATIONS_REQUIRED',
      exitCode: EXIT.DATABASE,
      hint: 'Run `sluice migrate` to apply the rest.',
    })
  }
  return version
}

/**
 * Runs a command next to its database. The result goes through JSON so that it has the
 * same shape here and when it comes back from the dev server.
 */
export async function execute(command: AnyCommand, ctx: RunContext, args: unknown): Promise<unknown> {
  if (command.needsSchema) await requireSchema(ctx.sluice, ctx.where)
  const result = await command.run(ctx, args)
  return JSON.parse(JSON.stringify(result ?? null))
}

/** Rejects positionals a command does not take. */
export function noPositionals(command: string, parsed: Parsed): void {
  if (parsed.positionals.length > 0) {
    throw new UsageError(
      `\`sluice ${command}\` takes no argument "${parsed.positionals[0]}".`,
      `Run \`sluice ${command} --help\`.`,
    )
  }
}
