/**
 * Parses the YAML subset our deployment files use: block mappings and sequences, plain and
 * quoted scalars, comments. Flow collections (`[a, b]`) and `${…}` come back as text.
 * Enough to check what serverless.yml points at, without a YAML dependency.
 */
export type YamlValue = string | boolean | number | null | YamlValue[] | { [key: string]: YamlValue }

interface Line {
  indent: number
  text: string
}

function scalar(raw: string): YamlValue {
  const text = raw.trim()
  if (/^"(.*)"$/.test(text)) return JSON.parse(text) as string
  if (/^'(.*)'$/.test(text)) return text.slice(1, -1).replaceAll("''", "'")
  if (text === 'true' || text === 'false') return text === 'true'
  if (text === '' || text === '~' || text === 'null') return null
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text)
  return text
}

function stripComment(line: string): string {
  let quote: string | undefined
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!
    if (quote) {
      if (ch === quote) quote = undefined
    } else if (ch === '"' || ch === "'") quote = ch
    else if (ch === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i)
  }
  return line
}

/** `key: value` or `key:`; a key ends at the first colon followed by a space or the line's end. */
const KEY = /^("[^"]*"|'[^']*'|[^\s#'"-][^#]*?):(?:\s+(.*))?$/

function parseBlock(lines: Line[], start: number, indent: number): [YamlValue, number] {
  const first = lines[start]
  if (!first || first.indent < indent) return [null, start]
  if (first.text.startsWith('- ') || first.text === '-') {
    const items: YamlValue[] = []
    let i = start
    while (i < lines.length && lines[i]!.indent === first.indent && lines[i]!.text.startsWith('-')) {
      const rest = lines[i]!.text.slice(1).trimStart()
      if (rest === '') {
        const [value, next] = parseBlock(lines, i + 1, first.indent + 1)
        items.push(value)
        i = next
      } else if (KEY.test(rest)) {
        // "- key: value" starts a mapping whose further keys sit two columns in.
        const inner: Line[] = [{ indent: first.indent + 2, text: rest }]
        let j = i + 1
        while (j < lines.length && lines[j]!.indent > first.indent) inner.push(lines[j++]!)
        items.push(parseBlock(inner, 0, first.indent + 2)[0])
        i = j
      } else {
        items.push(scalar(rest))
        i++
      }
    }
    return [items, i]
  }
  const map: Record<string, YamlValue> = {}
  let i = start
  while (i < lines.length && lines[i]!.indent === first.indent) {
    const match = KEY.exec(lines[i]!.text)
    if (!match) throw new SyntaxError(`Unsupported YAML line: ${lines[i]!.text}`)
    const key = scalar(match[1]!) as string
    if (match[2] !== undefined && match[2].trim() !== '') {
      map[key] = scalar(match[2])
      i++
    } else {
      const [value, next] = parseBlock(lines, i + 1, first.indent + 1)
      map[key] = value
      i = next
    }
  }
  return [map, i]
}

export function parseYaml(source: string): YamlValue {
  const lines: Line[] = []
  for (const raw of source.split(/\r?\n/)) {
    const text = stripComment(raw).trimEnd()
    if (text.trim() === '') continue
    lines.push({ indent: text.length - text.trimStart().length, text: text.trimStart() })
  }
  return parseBlock(lines, 0, 0)[0]
}
