import type { JobRun } from '../drain/options.js'
import { color, duration, truncate } from './output.js'

/** Why a suspended run stopped, and until when; `sluice job <id>` shows what its steps wait for. */
function suspension(run: JobRun): string {
  const until = run.suspended?.until
  const at = until ? ` until ${until.toISOString().slice(11, 19)} UTC` : ''
  switch (run.suspended?.reason) {
    case 'sleep':
      return `sleeping${at}`
    case 'wait':
      return `waiting for an event or invoked jobs${at} (\`sluice job ${run.id}\` shows which)`
    case 'progress':
      return 'its time ran out after new steps; it goes on in the next drain'
    default:
      return `its steps sleep or wait (\`sluice job ${run.id}\` shows which)`
  }
}

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
      return color.cyan(`suspended after ${took}: ${suspension(run)}`)
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
