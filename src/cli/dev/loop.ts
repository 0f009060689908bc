import type { JobRun } from '../../drain/options.js'
import type { Sluice } from '../../sluice.js'

export interface DrainLoop {
  /** Drain now (an enqueue happened) instead of at the next poll. */
  wake(): void
  /** Stops claiming; resolves once the drain in progress has finished and settled. */
  stop(): Promise<void>
}

export interface DrainLoopOptions {
  /** Poll interval when nothing wakes the loop, ms. */
  pollMs: number
  /** Jobs per drain call: small, so that a stop waits for little. */
  maxJobs: number
  onJob(run: JobRun): void
  onError(error: unknown, retryInMs: number): void
}

/**
 * Drains continuously in this process, the way the drain function does on each trigger:
 * woken at once by enqueues, polling as a fallback (for delayed jobs and retries coming
 * due, and for jobs enqueued by other processes). A failing drain (the database went
 * away) is retried with backoff up to 30 s.
 */
export function startDrainLoop(sluice: Sluice, options: DrainLoopOptions): DrainLoop {
  let stopping = false
  let woken = false
  let interrupt: (() => void) | undefined

  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(finish, ms)
      function finish(): void {
        clearTimeout(timer)
        interrupt = undefined
        resolve()
      }
      interrupt = finish
      if (woken || stopping) finish()
    })

  const done = (async () => {
    let failures = 0
    while (!stopping) {
      woken = false
      let progressed = false
      try {
        const summary = await sluice.drain({ maxJobs: options.maxJobs, onJob: options.onJob })
        failures = 0
        // Go again at once only when jobs ran and more may be due; a job that cannot fit
        // the budget is handed back every time and must not spin the loop.
        progressed =
          summary.claimed > summary.handedBack &&
          (summary.stoppedBy !== 'empty' || summary.remainingReady > 0)
      } catch (error) {
        failures++
        const retryInMs = Math.min(30_000, options.pollMs * 2 ** (failures - 1))
        options.onError(error, retryInMs)
        woken = false
        await pause(retryInMs)
        continue
      }
      if (!progressed && !stopping) await pause(options.pollMs)
    }
  })()

  return {
    wake() {
      woken = true
      interrupt?.()
    },
    async stop() {
      stopping = true
      interrupt?.()
      await done
    },
  }
}

/** Runs maintenance now and then every `everyMs`, never two at once. */
export function startMaintenance(
  sluice: Sluice,
  everyMs: number,
  report: (summary: string) => void,
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined
  const tick = (): void => {
    if (running) return
    running = sluice
      .maintain()
      .then((r) => {
        const notable = r.tasks.filter((t) => t.error || t.rows > 0)
        if (notable.length) {
          report(
            notable
              .map((t) => (t.error ? `${t.task} failed: ${t.error}` : `${t.task} ${t.rows} rows`))
              .join(', '),
          )
        }
      })
      .catch((error: unknown) => report(`failed: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        running = undefined
      })
  }
  tick()
  const timer = setInterval(tick, everyMs)
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
