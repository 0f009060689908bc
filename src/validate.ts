/**
 * Parse options for a schema checked once per process: definitions, options, secrets. zod
 * compiles an object schema into a faster parser on its first parse, which costs more than it
 * saves for a single parse, and is paid on every cold start. Schemas parsed per request or per
 * job keep the compiled path.
 */
export const ONCE = { jitless: true } as const
