/** The size table `sluice build` prints, and the one docs/deploy.md shows. */
import type { FunctionTarget } from './preset.js'

export interface BundleReport {
  entry: string
  /** The bundle, relative to the output directory's parent (`functions/aws/drain.mjs`). */
  file: string
  target: FunctionTarget
  bytes: number
  gzipBytes: number
}

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`

export function sizeTable(bundles: readonly BundleReport[]): string {
  const rows = [
    ['bundle', 'target', 'raw', 'gzip'],
    ...bundles.map((b) => [b.file, b.target, kib(b.bytes), kib(b.gzipBytes)]),
  ]
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows
    .map(
      (row, n) =>
        row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ') +
        (n === 0 ? `\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : ''),
    )
    .join('\n')
}
