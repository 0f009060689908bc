import * as z from 'zod/mini'

/**
 * An option that must be a function, checked with `typeof`: options are validated, not wrapped
 * (zod's function schema would bring more of zod into every bundle, the edge's included).
 */
export const callable = <T = (...args: never[]) => unknown>() =>
  z.custom<T>((v) => typeof v === 'function', 'must be a function')
