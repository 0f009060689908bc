import { latencyMeasurement } from '../lib/stats.js'
import { drainRun, POLL_MS, wakeRuns } from '../lib/steps.js'
import type { Measurement, Scenario } from '../lib/types.js'

/**
 * Durable steps: jobs of 10 no-op steps drained against the same jobs without steps (steps per
 * second; statements, server CPU and WAL per step), and publish to resume for jobs waiting for an
 * event, with a polling drain and with wake-ups. bench/steps.ts runs the same from the command
 * line, and its storage check.
 */
export const steps: Scenario = {
  name: 'steps',
  title: 'Durable steps: steps per second, cost per step, publish to resume',
  async run(ctx) {
    const cfg = {
      jobs: ctx.size === 'full' ? 2_000 : 500,
      steps: 10,
      waiters: ctx.size === 'full' ? 200 : 50,
    }
    const plain = await drainRun(cfg, ctx.url, ctx.admin, false)
    const stepped = await drainRun(cfg, ctx.url, ctx.admin, true)
    const n = cfg.jobs * cfg.steps
    const serverUs =
      stepped.serverMs === null || plain.serverMs === null
        ? null
        : Math.round(((stepped.serverMs - plain.serverMs) * 1000) / n)
    const out: Measurement[] = [
      {
        id: 'steps.throughput',
        scenario: 'steps',
        system: 'sluice',
        label: `${cfg.jobs} jobs × ${cfg.steps} no-op steps, one drain loop (concurrency 10)`,
        value: Math.round((n / stepped.ms) * 1000),
        unit: 'steps/s',
        cost: {
          serverUs,
          clientUs: 0,
          walBytes: Math.round((stepped.walBytes - plain.walBytes) / n),
        },
        details: { statementsPerStep: (stepped.statements - plain.statements) / n, plain, stepped },
      },
    ]
    const { polled, woken } = await wakeRuns(cfg, ctx.url)
    for (const [id, label, values] of [
      ['steps.resume.poll', `publish to resume, drain polling every ${POLL_MS} ms`, polled],
      ['steps.resume.wake', 'publish to resume, with wake-ups (debounce 0)', woken],
    ] as const)
      out.push(latencyMeasurement('steps', id, label, values))
    return {
      measurements: out,
      notes: [
        `Per step: ${((stepped.statements - plain.statements) / n).toFixed(2)} statements, ${serverUs ?? '?'} µs server CPU, ${Math.round((stepped.walBytes - plain.walBytes) / n)} B WAL (the run with steps minus the same jobs without, divided by the steps).`,
      ],
    }
  },
}
