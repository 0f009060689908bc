import { createWriteStream } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { pipeline } from 'node:stream/promises'
import yauzl from 'yauzl'

type ZipFile = yauzl.ZipFile

function open(path: string): Promise<ZipFile> {
  return new Promise((ok, fail) =>
    yauzl.open(path, { lazyEntries: true }, (error, zip) => (error ? fail(error) : ok(zip))),
  )
}

/** Visits every entry of the archive at `path` in order; `visit` may read the entry. */
async function eachEntry(
  path: string,
  visit: (zip: ZipFile, entry: yauzl.Entry) => Promise<void>,
): Promise<void> {
  const zip = await open(path)
  await new Promise<void>((ok, fail) => {
    zip.on('error', fail)
    zip.on('end', () => ok())
    zip.on('entry', (entry: yauzl.Entry) => {
      visit(zip, entry).then(() => zip.readEntry(), fail)
    })
    zip.readEntry()
  })
}

/** The names of the entries of a zip archive, in archive order. */
export async function zipEntries(path: string): Promise<string[]> {
  const names: string[] = []
  await eachEntry(path, async (_zip, entry) => {
    names.push(entry.fileName)
  })
  return names
}

/** Extracts a zip archive into `dir` (no external `unzip` command needed). */
export async function unzip(path: string, dir: string): Promise<void> {
  const root = resolve(dir)
  await eachEntry(path, async (zip, entry) => {
    const target = resolve(join(root, entry.fileName))
    if (!target.startsWith(`${root}/`)) throw new Error(`zip entry escapes its directory: ${entry.fileName}`)
    if (entry.fileName.endsWith('/')) {
      await mkdir(target, { recursive: true })
      return
    }
    await mkdir(dirname(target), { recursive: true })
    const stream = await new Promise<NodeJS.ReadableStream>((ok, fail) =>
      zip.openReadStream(entry, (error, s) => (error ? fail(error) : ok(s))),
    )
    await pipeline(stream, createWriteStream(target))
  })
}
