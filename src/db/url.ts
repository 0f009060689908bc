/**
 * Why pg cannot read a postgres:// URL, naming the variable or option it came from; undefined
 * when it can. pg reads it as a WHATWG URL, or with an empty host (`user@/db`) filled in: a `#`,
 * `@`, `/` or `?` left unescaped in the password, or a port that is no number up to 65535, makes
 * it no URL at all, and pg would only say "Invalid URL" at the first query.
 */
export function postgresUrlProblem(url: string, source: string): string | undefined {
  if (URL.canParse(url) || URL.canParse(url.replace('@/', '@host/'))) return undefined
  return (
    `${source} is not a URL the PostgreSQL driver can read: check the port, and percent-encode special ` +
    'characters in the user name and password (# as %23, @ as %40, / as %2F, ? as %3F, a space as %20).'
  )
}
