import type { Size } from './types.js'

/** Workload sizes per run size. Quick runs finish in about a minute, full runs in a few. */
export const SIZES = {
  quick: {
    processingJobs: 10_000,
    enqueueJobs: 10_000,
    enqueueSlice: 1_000,
    backlogs: [0, 10_000, 100_000],
    archiveRows: 100_000,
    latencySamples: 100,
  },
  full: {
    processingJobs: 100_000,
    enqueueJobs: 100_000,
    enqueueSlice: 1_000,
    backlogs: [0, 100_000, 1_000_000],
    archiveRows: 1_000_000,
    latencySamples: 300,
  },
} as const satisfies Record<Size, unknown>

export const sizes = (size: Size): (typeof SIZES)[Size] => SIZES[size]

let serial = 0
/** A schema name unique within the run. */
export const schemaName = (prefix: string): string => `${prefix}_${(serial++).toString().padStart(2, '0')}`
