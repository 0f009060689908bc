import { defineCommand, noPositionals } from '../command.js'

interface Result {
  schema: string
  database: string
  applied: number[]
  version: number
  /** Whether the app's `setup` export ran. */
  setup: boolean
}

export const migrate = defineCommand<Record<string, never>, Result>({
  name: 'migrate',
  summary: "create or update Sluice's tables, then run the app's setup",
  usage: 'sluice migrate',
  help: `Applies Sluice's pending migrations to its schema (SLUICE_SCHEMA, default "sluice"),
then runs the config's \`setup(sluice)\` export if it has one (the app's own tables).
Safe to run again, and from several processes at once.`,
  options: {},
  needsSchema: false,
  parse(parsed) {
    noPositionals('migrate', parsed)
    return {}
  },
  async run({ sluice, app, where }) {
    const { applied, version } = await sluice.migrate()
    if (app.setup) await app.setup(sluice)
    return { schema: sluice.config.schema, database: where, applied, version, setup: Boolean(app.setup) }
  },
  render(r) {
    const head = r.applied.length
      ? `Applied migration${r.applied.length > 1 ? 's' : ''} ${r.applied.join(', ')} to schema "${r.schema}" on ${r.database}: now at version ${r.version}.`
      : `Schema "${r.schema}" on ${r.database} is up to date (version ${r.version}).`
    return r.setup ? `${head}\nRan the app's setup().` : head
  },
})
