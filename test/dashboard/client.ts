import type { Hono } from 'hono'
import { SECRET } from '../helpers/http.js'

/** A browser's view of the dashboard: one cookie jar, forms posted as a browser posts them. */
export class Browser {
  cookies = new Map<string, string>()

  constructor(
    readonly app: Hono,
    readonly origin = 'http://localhost',
  ) {}

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  private keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq)
      const value = pair!.slice(eq + 1)
      if (/max-age=0/i.test(line) || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  async get(path: string): Promise<Response> {
    const res = await this.app.request(`${this.origin}${path}`, { headers: { Cookie: this.cookieHeader } })
    this.keep(res)
    return res
  }

  async page(path: string): Promise<string> {
    const res = await this.get(path)
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
    return res.text()
  }

  async post(path: string, fields: Record<string, string>): Promise<Response> {
    const res = await this.app.request(`${this.origin}${path}`, {
      method: 'POST',
      headers: {
        Cookie: this.cookieHeader,
        'Content-Type': 'application/x-www-form-urlencoded',
        Origin: this.origin,
      },
      body: new URLSearchParams(fields).toString(),
    })
    this.keep(res)
    return res
  }

  async login(secret = SECRET, base = '/dashboard'): Promise<Response> {
    return this.post(`${base}/login`, { secret })
  }
}

/** The CSRF token of the forms on a page. */
export function csrfOf(page: string): string {
  const match = /name="_csrf" value="([0-9a-f]{64})"/.exec(page)
  if (!match) throw new Error('no CSRF token on the page')
  return match[1]!
}
