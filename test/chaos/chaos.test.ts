/**
 * The standing fault suite: drain processes work through ten thousand jobs while the suite
 * kills them, terminates their backends, cuts their connections mid-statement and restarts
 * the PostgreSQL server it booted for itself, with overlapping maintenance calls throughout.
 * See scenario.ts for the run and verdict.ts for what is checked; `npm run chaos -- --long`
 * runs the same with bigger numbers.
 */
import { expect, test } from 'vitest'
import { runChaos, standardPlan } from './scenario.js'

test('killed drains, terminated backends, cut connections and server restarts lose nothing and overlap nothing', async () => {
  const report = await runChaos(standardPlan)
  const f = report.figures
  console.info(
    `chaos: ${f.jobs} jobs, ${f.faults.kills} kills (${f.faults.killsMidRun} mid-run), ${f.faults.terminations} terminations ` +
      `(${f.faults.backendsTerminated} backends), ${f.faults.cuts} cuts (${f.faults.connectionsCut} connections), ` +
      `${f.faults.restarts} restarts, ${f.maintenance.calls} maintain calls; ${f.reRuns} re-runs ` +
      `(${f.plainStepsRepeated} plain steps run twice) ` +
      `${JSON.stringify(f.reRunsByCause)}; lost ${f.lost}, overlaps ${f.overlaps}; ${(f.totalMs / 1000).toFixed(0)} s`,
  )
  expect(report.violations).toEqual([])
  // Every planned fault was injected (each waits for its point of progress, not for a time).
  expect(f.faults).toMatchObject({ kills: 6, terminations: 4, cuts: 4, restarts: 2 })
  expect(f).toMatchObject({
    lost: 0,
    overlaps: 0,
    insideLease: 0,
    deadLettered: 0,
    effectsMissing: 0,
    effectsDuplicated: 0,
    stepEffectsWrong: 0,
    ledgerOutOfOrder: 0,
    completedStepsReRun: 0,
    leftBehind: 0,
  })
  expect(f.reRunsByCause.unattributed).toBe(0)
  // Whether a fault costs a re-run depends on what it interrupted (a kill between two batches
  // costs none), so the count is reported, not asserted; verdict.test.ts shows the verdict
  // attributing re-runs to faults and reporting those no fault explains.
  expect(f.runs).toBeGreaterThanOrEqual(f.jobs - f.byKind.events)
}, 300_000)
