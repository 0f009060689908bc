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
    const message = error instanceof Error ? error.message.split('. ')[0]!.replace(/\.$/, '') : String(error)
    throw new UsageError(`${message}.`, `Run \`sluice ${command} --help\` for its flags.`)
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
export const intFlag = (min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))

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
