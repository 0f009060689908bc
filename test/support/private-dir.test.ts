import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, expect, test } from 'vitest'
import { fakeClone } from './clone-tree.js'
import { bootEmbedded, type EmbeddedCluster } from './embedded-postgres.js'

// `npm test` as root in a clone under a private directory (mode 700, as under /root or a
// `mktemp -d`): the embedded server runs as the unprivileged postgres user, which cannot
// enter that directory to reach the binaries installed in node_modules.
const asRoot = process.getuid?.() === 0
let privateDir: string | undefined
let cluster: EmbeddedCluster | undefined

afterAll(async () => {
  await cluster?.stop()
  if (privateDir) await rm(privateDir, { recursive: true, force: true })
})

test.runIf(asRoot)('boots from a clone in a directory only root can enter', async () => {
  privateDir = await mkdtemp(join(tmpdir(), 'sluice-private-'))
  // mkdtemp makes it 0700: only root gets in.
  const resolveFrom = await fakeClone(join(privateDir, 'clone'), 'linked')
  cluster = await bootEmbedded('sluice-private-pg-', { resolveFrom })
  const client = new pg.Client({ connectionString: cluster.url })
  await client.connect()
  const { rows } = await client.query<{ v: number }>('SELECT 1 + 1 AS v')
  await client.end()
  expect(rows[0]?.v).toBe(2)
})
