import type { Context } from 'hono'
import type { Sluice } from '../../../sluice.js'
import type { Html } from '../html.js'
import type { View } from '../view.js'

/** A page: the reads it needs (one statement per panel), rendered. */
export interface Page {
  /** Its route under the dashboard, e.g. `/jobs/:id`. */
  route: string
  /** The nav entry it belongs to. */
  nav: string
  render(sluice: Sluice, view: View, c: Context): Promise<{ title: string; body: Html; charts?: boolean }>
}
