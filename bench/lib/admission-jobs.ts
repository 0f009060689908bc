/**
 * The two queues bench/admission.ts and bench/stages.ts compare: plain jobs, and jobs under an
 * admission policy with concurrency + throttle + fair over 100 partitions (a throttle that never
 * binds, so that only its bookkeeping is measured).
 */
import * as z from 'zod'
import { type AdmissionOptions, defineJob } from '../../src/index.js'

const input = z.object({ n: z.number() })

export const plainJob = defineJob({ name: 'plain', queue: 'plain', input, run: () => {} })

/** Concurrency + throttle + fair over 100 partitions (bench/ab.ts --policy uses it too). */
export const GOVERNED: AdmissionOptions<{ n: number }> = {
  partition: (i) => `tenant-${i.n % 100}`,
  concurrency: { max: 50 },
  throttle: { rate: 100_000, per: 1_000 },
  fair: true,
}

export const governedJob = defineJob({
  name: 'governed',
  queue: 'governed',
  input,
  admission: GOVERNED,
  run: () => {},
})
