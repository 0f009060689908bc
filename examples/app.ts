/**
 * The example app as the deployable functions in functions/ serve it: database from
 * DATABASE_URL, schema from SLUICE_SCHEMA. Create its tables once with
 * `sluice migrate --config examples/sluice.config.ts` (Sluice's migrations and the example's own).
 */
import exampleApp from './sluice.config.js'

export const sluice = exampleApp()
