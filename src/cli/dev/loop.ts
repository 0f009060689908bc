import type { JobRun } from '../../drain/options.js'
import type { Sluice } from '../../sluice.js'
import { endInvocation } from '../invocation.js'
import { count } from '../output.js'

export interface DrainLoop {
  /** Drain now (an enqueue happened) instead of at the next poll. */
  wake(): void
  /** Stops claiming; resolves once the drain in progress has finished and settled. */
  stop(): Promise<void>
  /** For quitting at once: ends the invocations of the drain in progress and of failed ones. */
  abandon(): Promise<void>
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
 * away) is retried with backoff up to 30 s; its invocation is ended as soon as the
 * database takes it, at the latest when the loop stops.
 */
export function startDrainLoop(sluice: Sluice, options: DrainLoopOptions): DrainLoop {
  let stopping = false
  let woken = false
  let interrupt: (() => void) | undefined
  const stopClaiming = new AbortController()
  let current: string | undefined
  /** Invocations of failed drains not ended yet (the database was away). */
  const unended = new Set<string>()
  const endUnended = async (): Promise<void> => {
    for (const id of [...unended]) {
      try {
        await endInvocation(sluice, id)
        unended.delete(id)
      } catch {
        // Still away: tried again after the next drain, and when the loop stops.
      }
    }
  }

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
      const invocationId = `drn_${crypto.randomUUID()}`
      current = invocationId
      try {
        const summary = await sluice.drain({
          maxJobs: options.maxJobs,
          onJob: options.onJob,
          invocationId,
          signal: stopClaiming.signal,
        })
        failures = 0
        // Go again at once only when jobs ran and more may be due; a job that cannot fit
        // the budget is handed back every time and must not spin the loop.
        progressed =
          summary.claimed > summary.handedBack &&
          (summary.stoppedBy !== 'empty' || summary.remainingReady > 0)
      } catch (error) {
        unended.add(invocationId)
        await endUnended()
        failures++
        const retryInMs = Math.min(30_000, options.pollMs * 2 ** (failures - 1))
        options.onError(error, retryInMs)
        woken = false
        await pause(retryInMs)
        continue
      }
      current = undefined
      if (unended.size > 0) await endUnended()
      if (!progressed && !stopping) await pause(options.pollMs)
    }
    // The database may still be away: do not hold up the stop for long.
    await Promise.race([endUnended(), new Promise((resolve) => setTimeout(resolve, 3_000).unref())])
  })()

  return {
    wake() {
      woken = true
      interrupt?.()
    },
    async stop() {
      stopping = true
      stopClaiming.abort()
      interrupt?.()
      await done
    },
    async abandon() {
      if (current) unended.add(current)
      await endUnended()
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
              .map((t) => (t.error ? `${t.task} failed: ${t.error}` : `${t.task} ${count(t.rows, 'row')}`))
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
