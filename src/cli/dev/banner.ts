import type { Sluice } from '../../sluice.js'
import { describeInput } from '../describe-input.js'
import { color } from '../output.js'

export interface BannerInfo {
  sluice: Sluice
  configShown: string
  database: string
  /** How to run the CLI from here, e.g. `npx tsx src/cli/main.ts`. */
  cli: string
  url: string
  version: number
  samples: Record<string, unknown>
  pollMs: number
  maintainMs: number
  /** Whether other commands in this directory go through this server. */
  registered: boolean
}

const shellQuote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`

/** What `sluice dev` prints once it is up: where things are and what to try. */
export function banner(b: BannerInfo): string {
  const jobs = [...b.sluice.config.jobs.values()]
  const withSample = jobs.filter((j) => b.samples[j.name] !== undefined)
  const first = withSample[0] ?? jobs[0]
  const second = withSample[1]
  const lines = [
    color.bold('Sluice dev server is running.'),
    '',
    `  app       ${b.configShown}: ${jobs.map((j) => `${j.name} (queue ${j.queue})`).join(', ') || 'no jobs'}`,
    `  database  ${b.database}, schema "${b.sluice.config.schema}" (version ${b.version})`,
    `  http      ${color.cyan(b.url)}  ${color.yellow('authentication is OFF: local development only')}`,
    `  dashboard ${color.cyan(`${b.url}/dashboard`)}`,
    `  drain     in this process: at once after each enqueue or publish through this server, otherwise every ${b.pollMs / 1000} s`,
    `  maintain  every ${b.maintainMs / 1000} s`,
    '',
    'Try it from another terminal:',
  ]
  if (first && b.samples[first.name] !== undefined) {
    const body = JSON.stringify({ input: b.samples[first.name] })
    lines.push(
      `  curl -X POST ${b.url}/jobs/${first.name} -H 'content-type: application/json' -d ${shellQuote(body)}`,
    )
  } else if (first) {
    // No sample: an empty input would only be refused. Say what the input is, and where samples go.
    const shape = describeInput(first.input)
    lines.push(
      `  curl -X POST ${b.url}/jobs/${first.name} -H 'content-type: application/json' -d '{"input": …}'`,
      color.dim(
        `    ${shape ? `where the input is ${shape}; ` : ''}export \`samples\` from the config for ready-made commands`,
      ),
    )
  }
  // Samples keyed `event:<topic>` are events to publish.
  for (const [key, payload] of Object.entries(b.samples)) {
    if (!key.startsWith('event:') || b.sluice.config.subscribers.length === 0) continue
    const body = JSON.stringify({ payload })
    lines.push(
      `  curl -X POST ${b.url}/events/${key.slice('event:'.length)} -H 'content-type: application/json' -d ${shellQuote(body)}`,
    )
  }
  if (b.registered) {
    if (second)
      lines.push(`  ${b.cli} enqueue ${second.name} ${shellQuote(JSON.stringify(b.samples[second.name]))}`)
    lines.push(`  ${b.cli} status`, `  ${b.cli} dlq list`)
  }
  lines.push(`  curl ${b.url}/metrics`)
  if (b.registered)
    lines.push('', color.dim('Other sluice commands run in this directory go through this server.'))
  lines.push(color.dim('Each job run is logged below. Ctrl-C stops: jobs in progress finish first.'), '')
  return lines.join('\n')
}
