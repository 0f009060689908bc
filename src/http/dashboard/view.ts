/** What every page and form needs to know about the request it renders for. */
export interface View {
  /** The dashboard's path as the browser sees it (mount prefixes included), no trailing slash. */
  base: string
  /** The path and query of this page, to come back to after an action. */
  here: string
  csrf: string
  readOnly: boolean
  /**
   * Whether the visitor may see the dashboard (a session, or no log-in needed): the log-in page
   * and errors shown to anyone else have no navigation, refresh selector or badge.
   */
  signedIn: boolean
  /** Whether the log-out button is shown (sessions come from the log-in page). */
  canLogOut: boolean
  defaultRefreshSeconds: number
  /**
   * Whether the automatic refresh may fetch this page again: not for the answer to a form (its
   * address is the form's) nor for an error page.
   */
  refreshable: boolean
  flash: { text: string; error: boolean } | undefined
  /** The database page's warning thresholds (the dashboard's `horizonWarning` option). */
  horizonWarning: { xminAge?: number; heldMs?: number }
  /** Whether the database page shows other sessions' SQL text (createApp's `showSessionQueries`). */
  sessionQueries: boolean
}
