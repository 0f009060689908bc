import type { JobRun } from '../drain/options.js'
import { color, duration, truncate } from './output.js'

/** One line per job run: name, id, attempt, outcome, duration (and why it failed). */
export function formatRun(run: JobRun, timestamp = true): string {
  const time = timestamp ? `${color.dim(new Date().toISOString().slice(11, 23))}  ` : ''
  const took = duration(run.durationMs)
  const outcome =
    run.outcome === 'completed'
      ? color.green(`completed in ${took}`)
      : run.outcome === 'expired'
        ? color.yellow('expired: it waited longer than its queueTimeout')
        : run.outcome === 'retrying'
          ? color.yellow(`failed after ${took}, retry in ${duration(run.retryInMs ?? 0)}`)
          : color.red(`failed after ${took}, dead-lettered`)
  const why = run.error ? `: ${truncate(run.error.message, 200)}` : ''
  return `${time}${run.name} #${run.id}  attempt ${run.attempt}/${run.maxAttempts}  ${outcome}${why}`
}
