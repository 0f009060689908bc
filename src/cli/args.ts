import { type ParseArgsConfig, parseArgs } from 'node:util'
import * as z from 'zod'
import { nameSchema } from '../names.js'
import { UsageError } from './errors.js'

export type OptionsConfig = NonNullable<ParseArgsConfig['options']>

/** Flags every command takes. */
export const GLOBAL_OPTIONS = {
  config: { type: 'string', short: 'c' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionsConfig

export interface GlobalFlags {
  config: string | undefined
  dataDir: string | undefined
  json: boolean
  help: boolean
}

export interface Parsed {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>
  positionals: string[]
  globals: GlobalFlags
}

/** parseArgs (strict) over the global flags and the command's own; a bad flag is a usage error. */
export function parseCommandArgs(command: string, argv: readonly string[], options: OptionsConfig): Parsed {
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { ...GLOBAL_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    })
  } catch (error) {
    // parseArgs' own text names its API (`Option '--x <value>'…`, `use '--x=-XYZ'`): say it in the CLI's words.
    throw flagError(command, argv, { ...GLOBAL_OPTIONS, ...options }, error)
  }
  const values = parsed.values as Parsed['values']
  return {
    values,
    positionals: parsed.positionals,
    globals: {
      config: values.config as string | undefined,
      dataDir: values['data-dir'] as string | undefined,
      json: values.json === true,
      help: values.help === true,
    },
  }
}

/** The option a flag names (`--delay`, `--delay=5`, `-c`), or undefined for a positional. */
function optionOf(
  arg: string,
  options: OptionsConfig,
): { flag: string; name?: string; value?: string } | undefined {
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=')
    const long = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
    return {
      flag: `--${long}`,
      ...(long in options ? { name: long } : {}),
      ...(eq === -1 ? {} : { value: arg.slice(eq + 1) }),
    }
  }
  if (arg.startsWith('-') && arg.length > 1) {
    const short = arg[1]!
    const name = Object.keys(options).find((key) => options[key]!.short === short)
    return {
      flag: `-${short}`,
      ...(name ? { name } : {}),
      ...(arg.length > 2 ? { value: arg.slice(2) } : {}),
    }
  }
  return undefined
}

/**
 * Why parseArgs refused `argv`, as the CLI's usage error: found by reading the flags again
 * against the options (a string flag with no value, a value given to a switch, an unknown
 * flag), never from parseArgs' message.
 */
function flagError(
  command: string,
  argv: readonly string[],
  options: OptionsConfig,
  error: unknown,
): UsageError {
  const help = `Run \`sluice ${command} --help\` for its flags.`
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') break
    const option = optionOf(arg, options)
    if (!option) continue
    if (!option.name) return new UsageError(`\`sluice ${command}\` has no flag ${option.flag}.`, help)
    const type = options[option.name]!.type
    if (type === 'boolean') {
      if (option.value !== undefined) return new UsageError(`${option.flag} takes no value.`, help)
      continue
    }
    if (option.value !== undefined) continue
    const next = argv[i + 1]
    if (next === undefined) return new UsageError(`${option.flag} needs a value.`, help)
    if (next.startsWith('-'))
      return new UsageError(
        `${option.flag} needs a value, and "${next}" reads as a flag.`,
        `To give ${option.flag} a value that starts with "-", write ${option.flag}=${next}. ${help}`,
      )
    i++
  }
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  return new UsageError(
    code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
      ? `\`sluice ${command}\` takes no such argument.`
      : `The flags of \`sluice ${command}\` could not be read.`,
    help,
  )
}

/** Validates flag values with zod; the first problem becomes one sentence naming the flag. */
export function validate<T>(command: string, schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input)
  if (parsed.success) return parsed.data
  const flagOf = (path: readonly PropertyKey[]): string =>
    path.length ? `--${String(path[0])}` : 'The arguments'
  const [first, ...others] = parsed.error.issues
  throw new UsageError(
    `${flagOf(first!.path)} ${first!.message}.`,
    `Run \`sluice ${command} --help\` for its flags.`,
    others.length
      ? parsed.error.issues.map((i) => ({ path: [flagOf(i.path)], message: i.message }))
      : undefined,
  )
}

/** A whole number given as a flag value. */
export const intFlag = (min: number, max: number) => {
  const range = `must be a whole number, ${min === 0 ? 'zero or more' : `at least ${min}`}`
  return z
    .string()
    .regex(/^-?[0-9]+$/, range)
    .transform(Number)
    .pipe(z.number().int().min(min, range).max(max, `must be at most ${max}`))
}

/** `a,b` or repeated flags, split and trimmed. */
export const listFlag = <T extends z.core.$ZodType<unknown, string>>(item: T) =>
  z
    .union([z.string(), z.array(z.string())])
    .transform((v) =>
      (Array.isArray(v) ? v : [v])
        .flatMap((s) => s.split(','))
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item).min(1, 'needs at least one value'))

export const nameFlag = nameSchema

export const idFlag = z.string().regex(/^[0-9]{1,19}$/, 'must be a job id (a positive whole number)')
