/**
 * Splits an SQL script into statements at top-level semicolons, respecting
 * quotes, dollar quotes and comments. Comments are kept with their statement.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = []
  let start = 0
  let i = 0
  while (i < sql.length) {
    const c = sql[i]
    const next = sql[i + 1]
    if (c === '-' && next === '-') {
      const end = sql.indexOf('\n', i)
      i = end === -1 ? sql.length : end + 1
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2)
      i = end === -1 ? sql.length : end + 2
    } else if (c === "'" || c === '"') {
      let j = i + 1
      while (j < sql.length && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : 1
      i = j + 1
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))?.[0]
      if (tag) {
        const end = sql.indexOf(tag, i + tag.length)
        i = end === -1 ? sql.length : end + tag.length
      } else i++
    } else if (c === ';') {
      push(sql.slice(start, i))
      start = ++i
    } else i++
  }
  push(sql.slice(start))
  return statements

  function push(text: string): void {
    const code = text.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').trim()
    if (code) statements.push(text.trim())
  }
}
