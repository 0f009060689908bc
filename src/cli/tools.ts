/**
 * Commands that work on the project's files or environment, not on a queue: `sluice init`,
 * `sluice build` and `sluice secret`. They load no config and open no database.
 */
import { join, relative } from 'node:path'
import { buildFunctions } from '../build/build.js'
import { ConfigError } from '../errors.js'
import type { OptionsConfig, Parsed } from './args.js'
import { secretCommand, secretHelp } from './commands/secret.js'
import { CliError, EXIT, type ExitCode, UsageError } from './errors.js'
import { init, PLATFORMS, type Platform } from './init/init.js'
import { color, write } from './output.js'

export interface Tool {
  name: string
  summary: string
  usage: string
  help: string
  options: OptionsConfig
  run(parsed: Parsed): Promise<ExitCode>
}

const initTool: Tool = {
  name: 'init',
  summary: 'write the entry files and platform config of a deploy (aws, vercel, next, cloudflare)',
  usage: 'sluice init <aws | vercel | next | cloudflare> [--app path] [--force]',
  help: `Writes, into the project in the working directory, the files a deploy needs, readable and
yours to edit: the function entry points (functions/<platform>/, or the Next.js route file), the
platform's config (serverless.yml, vercel.json, wrangler.toml) and, when no module of the
project exports its \`sluice\`, a sluice.config skeleton that does. TypeScript when tsconfig.json
exists, JavaScript otherwise. Existing files are kept unless --force. Prints the next commands.

  aws         functions/aws/{drain,maintain,api} and serverless.yml (osls or serverless v3)
  vercel      functions/vercel/{sluice,drain,maintain} and vercel.json (built by \`sluice build --vercel\`)
  next        app/api/sluice/[...route]/route (or src/app/…) and vercel.json's cron
  cloudflare  functions/cloudflare/worker, sluice.contracts and wrangler.toml

  --app path  the module exporting your \`sluice\` (default: sluice.config.*, src/sluice.*,
              src/lib/sluice.*, lib/sluice.* … whichever exports it)
  --force     replace files that exist`,
  options: { app: { type: 'string' }, force: { type: 'boolean' } },
  async run(parsed) {
    const [platform, ...rest] = parsed.positionals
    if (!platform || !(PLATFORMS as readonly string[]).includes(platform) || rest.length > 0)
      throw new UsageError(
        platform ? `Unknown platform "${[platform, ...rest].join(' ')}".` : 'Which platform?',
        `Run \`sluice init ${PLATFORMS.join(' | ')}\`.`,
      )
    const result = await init({
      root: process.cwd(),
      platform: platform as Platform,
      ...(typeof parsed.values.app === 'string' ? { app: parsed.values.app } : {}),
      force: parsed.values.force === true,
    })
    if (parsed.globals.json) {
      const { written, kept, install, next } = result
      await write(process.stdout, JSON.stringify({ platform, written, kept, install, next }, null, 2))
      return EXIT.OK
    }
    const lines = [
      ...result.written.map((file) => `  wrote ${file}`),
      ...result.kept.map(
        (file) => `  kept  ${file} ${color.dim('(it exists; --force replaces it)', process.stdout)}`,
      ),
      '',
      result.imports,
      '',
      ...(result.install.length
        ? ['First install what the functions need:', ...result.install.map((c) => `  ${c}`), '']
        : []),
      'Next:',
      ...result.next.map((command) => `  ${command}`),
    ]
    await write(process.stdout, lines.join('\n'))
    return EXIT.OK
  },
}

const buildTool: Tool = {
  name: 'build',
  summary: 'bundle each function of functions/ for its platform, with the size table',
  usage: 'sluice build [entry…] [--out dir] [--vercel] [--external pkg,…]',
  help: `Bundles every entry of functions/<platform>/ (what \`sluice init\` writes) into one minified ESM
file with its source map under <out>/functions/<platform>/: Node functions (target node20, a
createRequire banner for bundled CommonJS, optional drivers left out) and edge functions (files
under cloudflare/, or declaring \`export const runtime = 'edge'\` or \`export const config = { runtime:
'edge' }\`), which fail the build if they import a Node built-in. The build also fails if your own
code imports the file system (node:fs): a bundle carries no files to read. Entries named drain leave out the
reading of recurring schedules (croner), drain and maintain entries the migrations. Prints each
bundle's size. Needs esbuild (\`npm install --save-dev esbuild\`).

  entry…          build only these entries (paths such as functions/aws/drain.ts)
  --out dir       default dist (bundles in dist/functions/)
  --vercel        also write Vercel's Build Output API to .vercel/output (vercel.json runs this);
                  functions/vercel/<name> is served at /api/<name>, every other /api path by the
                  Node function, and \`export const maxDuration\` is its limit
  --external a,b  more packages to leave out of the bundles`,
  options: { out: { type: 'string' }, vercel: { type: 'boolean' }, external: { type: 'string' } },
  async run(parsed) {
    const root = process.cwd()
    const external = typeof parsed.values.external === 'string' ? parsed.values.external.split(',') : []
    const json = parsed.globals.json
    const built = await buildFunctions({
      root,
      outDir: typeof parsed.values.out === 'string' ? parsed.values.out : 'dist',
      ...(parsed.positionals.length > 0 ? { only: parsed.positionals } : {}),
      external: external.map((name) => name.trim()).filter(Boolean),
      vercelOutput: parsed.values.vercel === true ? join(root, '.vercel/output') : false,
      // With --json the table and notes go to stderr: stdout carries the one document below.
      log: (line) => void (json ? process.stderr : process.stdout).write(`${line}\n`),
    }).catch((error: unknown) => {
      // esbuild not installed: a missing dev dependency, as for `sluice dev` (exit 2).
      if (!(error instanceof ConfigError)) throw error
      throw new CliError(error.message.replace(/: run .*$/, '.'), {
        code: 'INVALID_CONFIG',
        exitCode: EXIT.USAGE,
        hint: 'Install it: `npm install --save-dev esbuild`.',
      })
    })
    if (json) {
      const bundles = built.bundles.map(({ entry, file, target, bytes, gzipBytes }) => ({
        entry,
        file: relative(root, join(built.outDir, file)),
        target,
        bytes,
        gzipBytes,
      }))
      await write(process.stdout, JSON.stringify({ bundles }, null, 2))
    }
    return EXIT.OK
  },
}

const secretTool: Tool = {
  ...secretHelp,
  options: {},
  async run(parsed) {
    return secretCommand(parsed, {
      env: process.env,
      out: (text) => void process.stdout.write(text),
      err: (text) => void process.stderr.write(text),
    })
  },
}

export const TOOLS: ReadonlyMap<string, Tool> = new Map(
  [initTool, buildTool, secretTool].map((tool) => [tool.name, tool]),
)
