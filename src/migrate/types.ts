export interface Migration {
  version: number
  name: string
  /** Statements with `:SLUICE_SCHEMA` where the schema name goes. */
  statements: string[]
}
