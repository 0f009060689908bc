/**
 * What `controls/schedule.ts` is in a drain function's bundle (`sluice build`): no croner. A
 * drain runs jobs and never reads a recurring task's schedule; maintenance, the API's functions
 * and the CLI check each expression as the app loads, and read the schedules.
 */
import type { Cron } from 'croner'
import { ConfigError } from '../errors.js'

/** Expressions are checked where schedules are read, not in a drain. */
export function checkCron(_expression: string): void {}

export function cronSchedule(expression: string, _timezone: string): Cron {
  throw new ConfigError(
    `This drain function was built without recurring schedules, so it cannot read "${expression}": ` +
      'read recurring tasks from maintenance, the API function or the CLI.',
  )
}
