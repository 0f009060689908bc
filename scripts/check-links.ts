/**
 * Checks the relative links of the Markdown docs: every linked file exists, and every
 * `#anchor` matches a heading of its target (GitHub's slugs). `npx tsx scripts/check-links.ts`
 * prints each broken link and exits 1 if there is any.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(new URL('..', import.meta.url).pathname)

/** Where the repository's files are browsed: the README's links start so. */
export const REPOSITORY_FILES = 'https://github.com/sluice-dev/sluice/blob/main/'

export function markdownFiles(): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, 'docs', f))
  return [
    ...['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'bench/README.md'].map((f) => join(root, f)),
    ...docs,
  ]
}

/** The text outside fenced code blocks and inline code spans. */
function prose(text: string): string {
  return text
    .replace(/^```[\s\S]*?^```/gm, '')
    .split('\n')
    .map((line) => line.replace(/`[^`]*`/g, ''))
    .join('\n')
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const line of text.replace(/^```[\s\S]*?^```/gm, '').split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!m?.[1]) continue
    const base = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

export function brokenLinks(): string[] {
  const broken: string[] = []
  for (const file of markdownFiles()) {
    if (!existsSync(file)) continue
    const text = readFileSync(file, 'utf8')
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      // The README links to the repository absolutely (it is also the registry's page): checked as local files.
      const linked = m[1] ?? ''
      const target = linked.startsWith(REPOSITORY_FILES)
        ? relative(dirname(file), join(root, linked.slice(REPOSITORY_FILES.length))) || '.'
        : linked
      if (/^[a-z]+:/i.test(target)) continue
      const [path = '', anchor] = target.split('#')
      const dest = path === '' ? file : resolve(dirname(file), path)
      const where = `${relative(root, file)}: ${target}`
      if (!existsSync(dest)) {
        broken.push(`${where} (no such file)`)
        continue
      }
      if (anchor !== undefined && dest.endsWith('.md') && !anchors(readFileSync(dest, 'utf8')).has(anchor))
        broken.push(`${where} (no such heading)`)
    }
  }
  return broken
}

/** Whether the package ships `path` (relative to the root), by package.json `files`. */
export function shipped(path: string): boolean {
  const files: string[] = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).files ?? []
  const matches = (entry: string): boolean => path === entry || path.startsWith(`${entry}/`)
  return (
    files.some((entry) => !entry.startsWith('!') && matches(entry)) &&
    !files.some((entry) => entry.startsWith('!') && matches(entry.slice(1)))
  )
}

/**
 * Relative links of the files the package ships (README, CHANGELOG, docs/) to files it does not
 * ship: they resolve in the repository and are broken for whoever reads the installed package.
 * Link those with an absolute REPOSITORY_FILES address.
 */
export function unshippedLinks(): string[] {
  const out: string[] = []
  for (const file of markdownFiles()) {
    const from = relative(root, file)
    if (!existsSync(file) || !shipped(from)) continue
    for (const m of prose(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const [path = ''] = (m[1] ?? '').split('#')
      if (path === '' || /^[a-z]+:/i.test(path)) continue
      const target = relative(root, resolve(dirname(file), path))
      if (!shipped(target)) out.push(`${from}: ${m[1]} (${target} is not in the package)`)
    }
  }
  return out
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const broken = [...brokenLinks(), ...unshippedLinks()]
  for (const line of broken) console.log(line)
  console.log(broken.length === 0 ? 'links: all resolve' : `links: ${broken.length} broken`)
  process.exit(broken.length === 0 ? 0 : 1)
}
