import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { anchors, brokenLinks, markdownFiles, shipped, unshippedLinks } from '../../scripts/check-links.js'
import { repo } from '../helpers/cli.js'

describe('docs links', () => {
  it('every relative link in the README, CONTRIBUTING, CHANGELOG and docs/ resolves to a file and a heading', () => {
    expect(brokenLinks()).toEqual([])
  })

  it('the docs the package ships link only to files it ships (others absolutely, to the repository)', () => {
    expect(shipped('docs/http.md')).toBe(true)
    expect(shipped('docs/screenshots/overview.png')).toBe(false)
    expect(shipped('examples/node-server.ts')).toBe(false)
    expect(unshippedLinks()).toEqual([])
  })

  it('code the docs show imports zod as a namespace (`import { z }` puts all of zod in every bundle)', () => {
    const named = markdownFiles().flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /^\s*import\s*\{[^}]*\bz\b[^}]*\}\s*from\s*['"]zod/.test(line)
            ? [`${relative(repo, file)}:${i + 1}`]
            : [],
        ),
    )
    expect(named).toEqual([])
  })

  it('computes anchors the way GitHub does', () => {
    const text =
      '# The HTTP API\n## Signatures (v2)\n```\n# not a heading\n```\n## sluice dev\n## sluice dev\n'
    expect([...anchors(text)]).toEqual(['the-http-api', 'signatures-v2', 'sluice-dev', 'sluice-dev-1'])
  })
})
