import { createApp } from '../../src/http/app.js'
import { schemaName, sizes } from '../lib/sizes.js'
import { summarize } from '../lib/stats.js'
import type { Measurement, Scenario } from '../lib/types.js'
import { type BenchSluice, fillSluice, openSluice } from '../systems/sluice.js'

/** Drains to empty with `drain`, returning jobs per second. */
async function drainRate(b: BenchSluice, jobs: number, drain: () => Promise<number>): Promise<number> {
  await fillSluice(b, jobs)
  const started = performance.now()
  let done = 0
  while (done < jobs) {
    const claimed = await drain()
    if (claimed === 0) break
    done += claimed
  }
  return (done / (performance.now() - started)) * 1000
}

/** Scenario 6: the cost of going through the Hono app (routing, auth, body parsing, JSON) per drain call. */
export const httpDrain: Scenario = {
  name: 'http-drain',
  title: 'HTTP drain overhead: POST /drain through the Hono app versus calling drain() directly',
  async run(ctx) {
    const jobs = sizes(ctx.size).processingJobs / 2
    const samples = sizes(ctx.size).latencySamples
    const b = await openSluice(ctx.url, schemaName('sluice_http'))
    const secret = 'bench-secret-0123456789abcdef'
    const app = createApp(b.sluice, { auth: { secrets: [secret] }, env: {} })
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }
    const viaHttp = async (): Promise<number> => {
      const res = await app.request('/drain', { method: 'POST', headers, body: '{}' })
      if (res.status !== 200) throw new Error(`POST /drain answered ${res.status}`)
      return ((await res.json()) as { claimed: number }).claimed
    }
    const direct = async (): Promise<number> => (await b.sluice.drain()).claimed
    try {
      // Warm both paths, then time an empty drain call each way (its fixed cost), interleaved.
      for (let i = 0; i < 20; i++) await Promise.all([viaHttp(), direct()])
      const httpMs: number[] = []
      const directMs: number[] = []
      for (let i = 0; i < samples; i++) {
        let t = performance.now()
        await viaHttp()
        httpMs.push(performance.now() - t)
        t = performance.now()
        await direct()
        directMs.push(performance.now() - t)
      }
      const h = summarize(httpMs)
      const d = summarize(directMs)
      const directRate = await drainRate(b, jobs, direct)
      const httpRate = await drainRate(b, jobs, viaHttp)
      const out: Measurement[] = [
        {
          id: 'http.empty.direct',
          scenario: 'http-drain',
          system: 'sluice',
          label: 'empty drain(), called directly',
          value: d.p50,
          unit: 'ms',
          display: `p50 ${d.p50} ms · p99 ${d.p99} ms`,
          details: { ...d },
        },
        {
          id: 'http.empty.http',
          scenario: 'http-drain',
          system: 'sluice',
          label: 'empty POST /drain through the app (bearer auth)',
          value: h.p50,
          unit: 'ms',
          display: `p50 ${h.p50} ms · p99 ${h.p99} ms · overhead p50 ${(h.p50 - d.p50).toFixed(2)} ms`,
          details: { ...h },
        },
        {
          id: 'http.rate.direct',
          scenario: 'http-drain',
          system: 'sluice',
          label: `drain() loop over ${jobs} jobs`,
          value: Math.round(directRate),
          unit: 'jobs/s',
        },
        {
          id: 'http.rate.http',
          scenario: 'http-drain',
          system: 'sluice',
          label: `POST /drain loop over ${jobs} jobs`,
          value: Math.round(httpRate),
          unit: 'jobs/s',
          display: `${Math.round(httpRate).toLocaleString('en-US')} jobs/s (${((httpRate / directRate) * 100).toFixed(0)} % of direct)`,
        },
      ]
      return {
        measurements: out,
        notes: [
          `${samples} empty calls each way, interleaved, after 20 warm-up calls; app.request() (no network), so the figure is the app's own cost.`,
        ],
      }
    } finally {
      await b.close()
    }
  },
}
