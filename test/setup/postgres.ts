import type { TestProject } from 'vitest/node'
import { bootEmbedded } from '../support/embedded-postgres.js'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string
  }
}

/**
 * Provides `databaseUrl` to every test file: `DATABASE_URL` when it is set,
 * otherwise a throwaway embedded PostgreSQL cluster started here and removed
 * at the end of the run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fromEnv = process.env.DATABASE_URL
  if (fromEnv) {
    project.provide('databaseUrl', fromEnv)
    return async () => {}
  }
  const cluster = await bootEmbedded('sluice-pg-')
  project.provide('databaseUrl', cluster.url)
  return () => cluster.stop()
}
