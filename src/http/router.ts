import type { Env, Hono } from 'hono'
import { HonoBase } from 'hono/hono-base'
import type { Params, Result, Router } from 'hono/router'
import { PatternRouter } from 'hono/router/pattern-router'

/**
 * Hono's PatternRouter (the `hono/tiny` preset's, a fraction of the default preset's size)
 * with the default preset's strict trailing slash: a route that does not end in `*` matches a
 * path ending in "/" only when the route ends in "/" too, so `POST /jobs/a/` is a 404 here as
 * it is in createApp, not the route of `/jobs/a`.
 */
/**
 * A Hono app on that router, for the apps of one or two routes (the drain, maintenance and edge
 * apps and the platform wrappers): the default preset's routers are not bundled for them.
 */
export function leanHono<E extends Env = Env>(): Hono<E> {
  return new HonoBase<E>({ router: new StrictPatternRouter() }) as Hono<E>
}

export class StrictPatternRouter<T> implements Router<T> {
  name = 'StrictPatternRouter'
  readonly #routes = new PatternRouter<[T, boolean | undefined]>()

  add(method: string, path: string, handler: T): void {
    // undefined: the route ends in `*` and takes any end; otherwise, whether it ends in "/".
    this.#routes.add(method, path, [handler, path.endsWith('*') ? undefined : path.endsWith('/')])
  }

  match(method: string, path: string): Result<T> {
    const slash = path.endsWith('/')
    const [found] = this.#routes.match(method, path) as [[[T, boolean | undefined], Params][]]
    const handlers: [T, Params][] = []
    for (const [[handler, endsInSlash], params] of found)
      if (endsInSlash === undefined || endsInSlash === slash) handlers.push([handler, params])
    return [handlers]
  }
}
