import type { JobRun } from '../drain/options.js'
import { color, duration, truncate } from './output.js'

/** What a run's outcome says, after its name, id and attempt. */
function describeOutcome(run: JobRun): string {
  const took = duration(run.durationMs)
  switch (run.outcome) {
    case 'completed':
      return color.green(`completed in ${took}`)
    case 'expired':
      return color.yellow('expired: it waited longer than its queueTimeout')
    case 'retrying':
      return color.yellow(`failed after ${took}, retry in ${duration(run.retryInMs ?? 0)}`)
    case 'dead-lettered':
      return color.red(`failed after ${took}, dead-lettered`)
    case 'suspended':
      // A JobRun carries no reason or wake-up time; `sluice job <id>` shows what the steps wait for.
      return color.cyan(
        `suspended after ${took}: its steps sleep, wait for an event or an invoked job, or go on in a ` +
          `later drain (\`sluice job ${run.id}\` shows which)`,
      )
    default: {
      const unknown: never = run.outcome
      return color.yellow(String(unknown))
    }
  }
}

/** One line per job run: name, id, attempt, outcome, duration (and why it failed). */
export function formatRun(run: JobRun, timestamp = true): string {
  const time = timestamp ? `${color.dim(new Date().toISOString().slice(11, 23))}  ` : ''
  const why = run.error ? `: ${truncate(run.error.message, 200)}` : ''
  return `${time}${run.name} #${run.id}  attempt ${run.attempt}/${run.maxAttempts}  ${describeOutcome(run)}${why}`
}
