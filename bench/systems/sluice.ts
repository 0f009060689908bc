import { z } from 'zod'
import type { AdmissionOptions, Db, QueryEvent, Sluice, SluiceOptions } from '../../src/index.js'
import * as current from '../../src/index.js'

export const QUEUE = 'bench'
export const JOB = 'noop'

/** Every statement Sluice sends, through its `onQuery` hook. */
export class QueryLog {
  events: QueryEvent[] = []
  readonly hook = (event: QueryEvent): void => {
    this.events.push(event)
  }
  reset(): void {
    this.events = []
  }
  get count(): number {
    return this.events.length
  }
}

export interface BenchSluice {
  sluice: Sluice
  schema: string
  /** The quoted schema, as the SQL builders take it. */
  t: string
  log: QueryLog
  /** Handler runs since the last reset. */
  handled: { count: number }
  /** Tells a claim statement from a settle statement by its text. */
  kindOf(
    event: QueryEvent,
  ): 'claim' | 'settle' | 'settle+finish' | 'settle+claim' | 'enqueue' | 'enqueueMany' | 'other'
  close(): Promise<void>
}

/** The no-op job every scenario runs: a tiny JSON payload, validated by zod like any real job. */
export const payload = (n: number): { n: number } => ({ n })

/** The entry points the bench uses; another build of Sluice (bench/ab.ts) passes its own. */
export interface SluiceLibrary {
  createSluice: typeof current.createSluice
  defineJob: typeof current.defineJob
}

/** A migrated Sluice on its own schema with one no-op job on queue `bench`, on a URL or an adapter. */
export async function openSluice(
  url: string | Db,
  schema: string,
  options: Pick<SluiceOptions, 'drain' | 'queues'> = {},
  { createSluice, defineJob }: SluiceLibrary = current,
  {
    migrate = true,
    admission,
  }: {
    migrate?: boolean
    /** The job's admission policy (bench/ab.ts --policy); none by default. */
    admission?: AdmissionOptions<{ n: number }>
  } = {},
): Promise<BenchSluice> {
  const handled = { count: 0 }
  const job = defineJob({
    name: JOB,
    queue: QUEUE,
    input: z.object({ n: z.number().int() }),
    ...(admission ? { admission } : {}),
    run: async () => {
      handled.count++
    },
  })
  const log = new QueryLog()
  const sluice = createSluice({ database: url, schema, jobs: [job], onQuery: log.hook, env: {}, ...options })
  if (migrate) await sluice.migrate()
  log.reset()
  const t = `"${schema}"`
  return {
    sluice,
    schema,
    t,
    log,
    handled,
    kindOf(event) {
      const text = event.text
      if (text.startsWith(`INSERT INTO ${t}.jobs`))
        return text.includes('jsonb_array_elements') ? 'enqueueMany' : 'enqueue'
      // Told apart by their shape, so that builder variants (fewer CTEs, merged statements) still count.
      const claims = /\bpicked AS \(|\.(relay_and_)?claim\(/.test(text)
      const settles = text.includes(' AS handed_back') || /\.settle\(/.test(text)
      const finishes =
        text.includes(`DELETE FROM ${t}.invocations WHERE id =`) || /\.settle\([^)]*\$4/.test(text)
      if (claims && settles) return 'settle+claim'
      if (claims) return 'claim'
      if (settles) return finishes ? 'settle+finish' : 'settle'
      return 'other'
    },
    close: () => sluice.close(),
  }
}

/** Enqueues `n` no-op jobs through `enqueueMany` in slices of `slice`. */
export async function fillSluice(b: BenchSluice, n: number, slice = 5000): Promise<void> {
  for (let start = 0; start < n; start += slice) {
    const inputs = Array.from({ length: Math.min(slice, n - start) }, (_, i) => payload(start + i))
    await b.sluice.enqueueMany(JOB, inputs)
  }
}

/**
 * Calls `drain()` until a drain stops on an empty queue with nothing left ready,
 * `parallel` loops at once. Returns the number of drain calls.
 */
export async function drainAll(b: BenchSluice, parallel = 1): Promise<number> {
  let calls = 0
  const loop = async (): Promise<void> => {
    for (;;) {
      const summary = await b.sluice.drain()
      calls++
      if (summary.stoppedBy === 'empty' && summary.remainingReady === 0) return
    }
  }
  await Promise.all(Array.from({ length: parallel }, loop))
  return calls
}
