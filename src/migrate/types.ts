export interface Migration {
  version: number
  name: string
  /** Statements with `:SLUICE_SCHEMA` where the schema name goes. */
  statements: string[]
}

/** One file of migrations/functions: the functions (and types) it defines, applied when its content changes. */
export interface FunctionSource {
  /** The file's name without `.sql`. */
  name: string
  /** SHA-256 of the file's content: what the schema records once it is applied. */
  hash: string
  /** Statements with `:SLUICE_SCHEMA` where the schema name goes. */
  statements: string[]
}
