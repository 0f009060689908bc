/**
 * The example app: its jobs on a Sluice whose database comes from DATABASE_URL
 * (and schema from SLUICE_SCHEMA). The deployable functions in functions/ serve it.
 */
import { createSluice } from '../src/index.js'
import { jobs } from './jobs.js'

export const sluice = createSluice({ jobs })
