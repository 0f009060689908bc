/**
 * The one module that reads cron expressions (croner). A drain function's bundle replaces it with
 * `build/drain-schedule.ts` (see `sluice build`): a drain never reads a schedule, and croner is
 * about a tenth of its bundle.
 */
import { Cron } from 'croner'

const UTC = { utcOffset: 0, paused: true } as const

/** Throws croner's message when `expression` is not a cron expression (checked in UTC: its syntax does not depend on the zone). */
export function checkCron(expression: string): void {
  new Cron(expression, UTC).nextRun()
}

/** The schedule of `expression` read in `timezone` (an IANA name, or `UTC`). */
export function cronSchedule(expression: string, timezone: string): Cron {
  return new Cron(expression, timezone === 'UTC' ? UTC : { timezone, paused: true })
}
