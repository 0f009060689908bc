#!/usr/bin/env node
import { readFileSync } from 'node:fs'
import { closest } from '../names.js'
import { parseCommandArgs } from './args.js'
import { type AnyCommand, execute, type Interrupt } from './command.js'
import { devHelp, runDev } from './commands/dev.js'
import { COMMANDS } from './commands/index.js'
import { CliError, EXIT, type Explained, explain, UsageError } from './errors.js'
import { COMMAND_NAMES, commandHelp, findHelp, topHelp } from './help.js'
import { displayPath, findConfig, loadApp } from './load-config.js'
import { color, formatError, keepStdoutForJson, write } from './output.js'
import { runOnDevServer } from './remote.js'
import { chooseTarget, type Target, unreachableHint } from './target.js'
import { TOOLS } from './tools.js'

/** Global flags may come before the command: `sluice --config x.ts status`. */
function splitCommand(argv: readonly string[]): { name: string | undefined; rest: string[] } {
  const before: string[] = []
  let i = 0
  while (i < argv.length && argv[i]!.startsWith('-')) {
    const flag = argv[i]!
    before.push(flag)
    if ((flag === '--config' || flag === '-c' || flag === '--data-dir') && i + 1 < argv.length)
      before.push(argv[++i]!)
    i++
  }
  return { name: argv[i], rest: [...before, ...argv.slice(i + 1)] }
}

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string
    }
    return pkg.version ?? 'unknown'
  } catch {
    return 'unknown'
  }
}

async function fail(error: unknown, json: boolean, target?: Target): Promise<number> {
  let explained: Explained = explain(error)
  if (explained.code === 'DATABASE_UNAVAILABLE' && target?.via !== 'dev-server') {
    // `dev` and the commands that open the database themselves use DATABASE_URL when it is set.
    const sqlState =
      typeof error === 'object' && error !== null ? (error as { sqlState?: unknown }).sqlState : undefined
    const hint = unreachableHint(
      process.env.DATABASE_URL,
      typeof sqlState === 'string' ? sqlState : undefined,
    )
    if (hint) explained = { ...explained, hint }
  }
  if (json) {
    const { exitCode: _, ...body } = explained
    await write(process.stdout, JSON.stringify({ error: body }))
  }
  await write(process.stderr, formatError(explained))
  return explained.exitCode
}

/**
 * Ctrl-C and SIGTERM while an interruptible command runs here: the first aborts its signal (it
 * stops cleanly), a second runs its quit cleanups for up to 3 s and exits 130 at once.
 */
function takeSignals(command: AnyCommand, releaseLock: () => void): { interrupt?: Interrupt; done(): void } {
  if (!command.interruptible) return { done() {} }
  const controller = new AbortController()
  const cleanups: (() => Promise<unknown>)[] = []
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!controller.signal.aborted) {
      process.stderr.write(
        `\n${signal}: stopping. Jobs in progress finish first (press Ctrl-C again to quit at once).\n`,
      )
      controller.abort()
      return
    }
    process.stderr.write('Quitting now: jobs that were running are retried once their lease runs out.\n')
    const bounded = new Promise((resolve) => setTimeout(resolve, 3_000).unref())
    void Promise.race([Promise.allSettled(cleanups.map((cleanup) => cleanup())), bounded]).finally(() => {
      releaseLock()
      process.exit(EXIT.INTERRUPTED)
    })
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return {
    interrupt: { signal: controller.signal, onQuit: (cleanup) => void cleanups.push(cleanup) },
    done() {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    },
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const { name, rest } = splitCommand(argv)
  const json = argv.includes('--json')
  if (!name) {
    if (argv.includes('--version')) {
      await write(process.stdout, version())
      return EXIT.OK
    }
    const asked = argv.includes('--help') || argv.includes('-h')
    await write(asked ? process.stdout : process.stderr, topHelp())
    return asked ? EXIT.OK : EXIT.USAGE
  }
  if (name === 'help') {
    const about = rest.find((a) => !a.startsWith('-'))
    const found = about ? findHelp(about) : undefined
    await write(process.stdout, found ? commandHelp(found) : topHelp())
    return EXIT.OK
  }
  const tool = TOOLS.get(name)
  if (tool) {
    try {
      const parsed = parseCommandArgs(name, rest, tool.options)
      if (parsed.globals.help) {
        await write(process.stdout, commandHelp(tool))
        return EXIT.OK
      }
      return await tool.run(parsed)
    } catch (error) {
      return fail(error, json)
    }
  }
  let target: Target | undefined
  try {
    const command = COMMANDS.get(name)
    if (!command && name !== 'dev') {
      const guess = closest(name, COMMAND_NAMES)
      throw new UsageError(
        `Unknown command "${name}".`,
        `${guess ? `Did you mean \`sluice ${guess}\`? ` : ''}Commands: ${COMMAND_NAMES.join(', ')}. Run \`sluice --help\`.`,
      )
    }
    const parsed = parseCommandArgs(name, rest, command ? command.options : devHelp.options)
    if (parsed.globals.help) {
      await write(process.stdout, commandHelp(command ?? devHelp))
      return EXIT.OK
    }
    if (!command) return await runDev(parsed)
    if (parsed.globals.json) keepStdoutForJson()
    const args = await command.parse(parsed)

    let configPath: string | undefined
    target = await chooseTarget(name, parsed.globals.dataDir, {
      beforeOpening: async () => {
        configPath = await findConfig(parsed.globals.config)
      },
    })
    let result: unknown
    if (target.via === 'dev-server') {
      const { server } = target
      if (parsed.globals.config && server.config) {
        const mine = await findConfig(parsed.globals.config)
        if (mine !== server.config)
          await write(
            process.stderr,
            `Note: the dev server runs ${displayPath(server.config)}; --config ${parsed.globals.config} is not used.`,
          )
      }
      await write(
        process.stderr,
        color.dim(`(through the dev server at ${server.url}, pid ${server.pid})`, process.stderr),
      )
      result = await runOnDevServer(server, name, args)
    } else {
      const { lock } = target
      const signals = takeSignals(command, () => lock?.releaseSync())
      try {
        const app = await loadApp(configPath!, { database: target.database })
        try {
          result = await execute(
            command,
            {
              sluice: app.sluice,
              app,
              where: target.where,
              ...(signals.interrupt ? { interrupt: signals.interrupt } : {}),
            },
            args,
          )
        } finally {
          await app.sluice.close().catch(() => {})
        }
      } finally {
        signals.done()
        await lock?.release()
      }
    }
    await write(
      process.stdout,
      parsed.globals.json ? JSON.stringify(result, null, 2) : command.render(result),
    )
    return command.exitCode?.(result) ?? EXIT.OK
  } catch (error) {
    return fail(error, json, target)
  }
}

const code = await main(process.argv.slice(2)).catch(async (error: unknown) => {
  await write(
    process.stderr,
    `sluice: unexpected failure: ${error instanceof Error ? error.stack : String(error)}`,
  )
  return error instanceof CliError ? error.exitCode : EXIT.FAILED
})
process.exit(code)
