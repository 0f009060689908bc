/**
 * The admin API's inputs and outputs as zod schemas: the routes validate with them and the
 * OpenAPI document is generated from them (z.toJSONSchema), so the two cannot drift apart.
 * One file per group of routes, under schemas/.
 */
export * from './schemas/common.js'
export * from './schemas/dead-letters.js'
export * from './schemas/jobs.js'
export * from './schemas/policies.js'
export * from './schemas/queues.js'
export * from './schemas/recurring.js'
export * from './schemas/state.js'
