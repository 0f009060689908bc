/**
 * `sluice init <aws | vercel | next | cloudflare>`: writes the entry files and the platform's
 * config into the project, plus a `sluice.config` skeleton when the project has no module
 * exporting its `sluice`. Never overwrites a file without `force`.
 */
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { isInstalled } from '../../build/installed.js'
import { importPath, inspectProject, type Project, serviceName } from './project.js'
import * as t from './templates.js'

export const PLATFORMS = ['aws', 'vercel', 'next', 'cloudflare'] as const
export type Platform = (typeof PLATFORMS)[number]

export interface PlannedFile {
  /** Relative to the project's root. */
  path: string
  content: string
}

export interface InitOptions {
  root: string
  platform: Platform
  /** The module exporting the app's `sluice`, relative to root. Default: found, or a skeleton. */
  app?: string
  force?: boolean
}

export interface InitResult {
  project: Project
  /** What the written files import the app from. */
  imports: string
  written: string[]
  /** Files left as they were (they exist; pass force to replace them). */
  kept: string[]
  /** Install commands for what the functions need and the project lacks; empty when it has it all. */
  install: string[]
  next: string[]
}

/** Entry files: .ts in a TypeScript project, else .mjs (or .js in an ESM package). */
function entryExt(project: Project): string {
  return project.typescript ? '.ts' : project.esm ? '.js' : '.mjs'
}

export function plan(project: Project, platform: Platform): PlannedFile[] {
  const ext = entryExt(project)
  const files: PlannedFile[] = []
  if (project.appMissing) files.push({ path: project.app, content: t.configSkeleton(project.typescript) })
  const entry = (path: string, make: (app: string) => string, style: 'esm' | 'bundler' = 'esm') =>
    files.push({ path, content: make(importPath(path, project.app, style)) })
  const service = serviceName(project.name)
  switch (platform) {
    case 'aws':
      entry(`functions/aws/drain${ext}`, t.awsDrain)
      entry(`functions/aws/maintain${ext}`, t.awsMaintain)
      entry(`functions/aws/api${ext}`, t.awsApi)
      files.push({ path: 'serverless.yml', content: t.serverlessYml(service) })
      break
    case 'vercel':
      entry(`functions/vercel/sluice${ext}`, t.vercelFunction)
      entry(`functions/vercel/drain${ext}`, t.vercelDrain)
      entry(`functions/vercel/maintain${ext}`, t.vercelMaintain)
      files.push({ path: 'vercel.json', content: t.vercelJson('sluice build --vercel', '/api/maintain') })
      break
    case 'next': {
      const routes = `${project.nextAppDir}/api/sluice`
      const ts = project.typescript ? '.ts' : '.js'
      entry(`${routes}/[...route]/route${ts}`, t.nextRoute, 'bundler')
      entry(`${routes}/drain/route${ts}`, t.nextDrainRoute, 'bundler')
      entry(`${routes}/maintain/route${ts}`, t.nextMaintainRoute, 'bundler')
      files.push({ path: 'vercel.json', content: t.vercelJson(undefined, '/api/sluice/maintain') })
      break
    }
    case 'cloudflare': {
      const contracts = project.typescript ? 'sluice.contracts.ts' : `sluice.contracts${ext}`
      if (!existsSync(join(project.root, contracts)))
        files.push({ path: contracts, content: t.contractsSkeleton() })
      const worker = `functions/cloudflare/worker${ext}`
      files.push({
        path: worker,
        content: t.cloudflareWorker(importPath(worker, contracts, 'esm'), project.typescript),
      })
      files.push({ path: 'wrangler.toml', content: t.wranglerToml(service) })
      break
    }
  }
  return files
}

/** Where the written files find the app, in a sentence. */
export function importsLine(project: Project, platform: Platform): string {
  const skeleton = project.appMissing ? ' (a skeleton: add your jobs)' : ''
  if (platform === 'cloudflare') {
    const contracts = project.typescript ? 'sluice.contracts.ts' : `sluice.contracts${entryExt(project)}`
    return `The Worker imports only your job contracts, from ${contracts}; the CLI loads \`sluice\` from ${project.app}.${skeleton}`
  }
  return `The ${platform === 'next' ? 'routes' : 'functions'} import \`sluice\` from ${project.app}.${skeleton}`
}

/** What each platform's functions need: their driver, and esbuild for `sluice build`. */
const NEEDS: Record<Platform, { deps: string[]; dev: string[] }> = {
  aws: { deps: ['pg'], dev: ['esbuild', 'osls'] },
  vercel: { deps: ['pg'], dev: ['esbuild'] },
  next: { deps: ['pg', 'next'], dev: [] },
  cloudflare: { deps: ['@neondatabase/serverless'], dev: ['esbuild'] },
}

/**
 * `npm install …` for what `platform`'s functions (and a skeleton app's zod) need and `project`
 * lacks, and tsx when the CLI will load a TypeScript app module.
 */
export function installCommands(project: Project, platform: Platform): string[] {
  const needs = NEEDS[platform]
  const deps = [...needs.deps, ...(project.appMissing ? ['zod'] : [])].filter(
    (name) => !isInstalled(project.root, name),
  )
  // The CLI (`sluice migrate`, the next command) loads a TypeScript app module through tsx.
  const cliNeeds = /\.[mc]?ts$/.test(project.app) ? ['tsx'] : []
  const dev = [...needs.dev, ...cliNeeds].filter((name) => !isInstalled(project.root, name))
  return [
    ...(deps.length ? [`npm install ${deps.join(' ')}`] : []),
    ...(dev.length ? [`npm install --save-dev ${dev.join(' ')}`] : []),
  ]
}

/** The next three commands, for the person who ran init. */
export function nextCommands(platform: Platform, service = '<service>'): string[] {
  const migrate = 'DATABASE_URL=postgres://… npx sluice migrate'
  switch (platform) {
    case 'aws':
      return [
        `SLUICE_SECRET=$(npx sluice secret generate) DATABASE_URL=postgres://… npx sluice secret aws-json | aws secretsmanager create-secret --name ${service}/dev --secret-string file:///dev/stdin`,
        migrate,
        'npx sluice build && npx osls deploy',
      ]
    case 'vercel':
      return [
        migrate,
        'npx sluice secret generate | npx vercel env add SLUICE_SECRET production   # and DATABASE_URL, CRON_SECRET, SLUICE_DRAIN_URL (https://<your-domain>/api/drain)',
        'npx vercel deploy --prod   # runs `sluice build --vercel`',
      ]
    case 'next':
      return [
        migrate,
        'npx next build   # needs neither DATABASE_URL nor SLUICE_SECRET',
        'npx vercel deploy --prod   # with DATABASE_URL, SLUICE_SECRET, CRON_SECRET and SLUICE_DRAIN_URL (https://<your-domain>/api/sluice/drain) set in the project',
      ]
    case 'cloudflare':
      return [
        'npx sluice build',
        'npx wrangler secret put DATABASE_URL && npx sluice secret generate | npx wrangler secret put SLUICE_SECRET',
        'npx wrangler deploy',
      ]
  }
}

export async function init(options: InitOptions): Promise<InitResult> {
  const project = inspectProject(options.root, options.app)
  const written: string[] = []
  const kept: string[] = []
  for (const file of plan(project, options.platform)) {
    const path = join(project.root, file.path)
    if (existsSync(path) && !options.force) {
      kept.push(file.path)
      continue
    }
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, file.content)
    written.push(file.path)
  }
  return {
    project,
    imports: importsLine(project, options.platform),
    written,
    kept,
    install: installCommands(project, options.platform),
    next: nextCommands(options.platform, serviceName(project.name)),
  }
}
