/**
 * Deploy-time checks of the secrets a deployment runs with, by the rules the functions apply
 * at every cold start (a bad SLUICE_SECRET would otherwise fail each one), and a generator
 * for a good secret.
 */
import { postgresUrlProblem } from '../db/url.js'
import { secretSchema } from '../http/auth.js'

/** 32 random bytes, base64url: 43 visible ASCII characters. */
export function generateSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')
}

/** What is wrong with one secret, as a sentence: `SLUICE_SECRET is 1,025 characters; at most 1,024.` */
function secretProblem(variable: string, secret: string): string | undefined {
  const parsed = secretSchema.safeParse(secret)
  return parsed.success ? undefined : `${variable} ${parsed.error.issues[0]?.message}.`
}

export interface DeployEnvCheck {
  /** DATABASE_URL and SLUICE_SECRET must be set (not only valid when set). Default false. */
  require?: boolean
  /**
   * The deployment has a drain that only wake-ups call (Vercel's `api/drain`): SLUICE_DRAIN_URL
   * must be set, or nothing would ever call it. Default false.
   */
  drainUrl?: boolean
  /** The deployment's maintenance is called by Vercel cron, which sends CRON_SECRET: it must be set. Default false. */
  cron?: boolean
}

/** What is wrong with the deployment's environment, one sentence each; empty when nothing is. */
export function deployEnvProblems(
  env: Record<string, string | undefined>,
  options: DeployEnvCheck = {},
): string[] {
  const problems: string[] = []
  const secret = env.SLUICE_SECRET
  const cron = env.CRON_SECRET?.trim() || undefined
  if (secret === undefined || secret.trim() === '') {
    if (options.require && cron === undefined)
      problems.push(
        'SLUICE_SECRET is not set: every route that needs credentials answers 500 (INVALID_CONFIG) until it is.',
      )
  } else {
    const tokens = secret.split(',').map((token) => token.trim())
    if (tokens.length > 2)
      problems.push('SLUICE_SECRET takes at most two comma-separated secrets (the current one and the next).')
    tokens.forEach((token, i) => {
      const problem = secretProblem(`SLUICE_SECRET${tokens.length > 1 ? ` (secret ${i + 1})` : ''}`, token)
      if (problem) problems.push(problem)
    })
    if (new Set(tokens).size !== tokens.length) problems.push('SLUICE_SECRET lists the same secret twice.')
  }
  if (cron !== undefined) {
    const problem = secretProblem('CRON_SECRET', cron)
    if (problem) problems.push(problem)
  } else if (options.cron) {
    problems.push(
      'CRON_SECRET is not set: Vercel cron sends it to the maintenance function, which refuses the call (401) without it.',
    )
  }
  const drainUrl = env.SLUICE_DRAIN_URL?.trim() || undefined
  if (drainUrl === undefined) {
    if (options.drainUrl)
      problems.push(
        'SLUICE_DRAIN_URL is not set: maintenance and enqueues wake drains through it, so without it no job would ever run. ' +
          "Set it to your deployment's drain, https://<your-domain>/api/drain.",
      )
  } else if (!/^https?:\/\/[^/]/.test(drainUrl) || !URL.canParse(drainUrl)) {
    problems.push(
      "SLUICE_DRAIN_URL must be an http:// or https:// URL (your deployment's drain, https://<your-domain>/api/drain).",
    )
  }
  const url = env.DATABASE_URL
  if (url === undefined || url.trim() === '') {
    if (options.require) problems.push('DATABASE_URL is not set.')
  } else if (!/^postgres(ql)?:\/\/[^/]/.test(url)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL.')
  } else {
    const problem = postgresUrlProblem(url, 'DATABASE_URL')
    if (problem) problems.push(problem)
  }
  return problems
}

/** What to do about `problems` when one is a secret's: the command that makes a good one. */
export function secretAdvice(problems: readonly string[]): string | undefined {
  return problems.some((p) => p.startsWith('SLUICE_SECRET') || p.startsWith('CRON_SECRET'))
    ? 'Generate a good secret with `npx sluice secret generate`.'
    : undefined
}
