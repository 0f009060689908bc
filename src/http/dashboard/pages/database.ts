import { duration, EMPTY, html, number, section, table, time } from '../html.js'
import type { Page } from './types.js'

const bytes = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(0)} KiB` : `${(n / 1048576).toFixed(1)} MiB`

/**
 * Bloat is flagged only on a table at least this large: a small table's dead rows cost nothing
 * worth a warning (a 32 KiB table of 3 rows is "80 % bloat" after one vacuum-less minute).
 */
export const BLOAT_FLOOR_BYTES = 8 * 1048576
/** And only past this share of dead rows. */
export const BLOAT_WARN = 0.2

const bloated = (t: { bloat: number | null; bytes: number }): boolean =>
  t.bloat !== null && t.bloat > BLOAT_WARN && t.bytes >= BLOAT_FLOOR_BYTES

export const databasePage: Page = {
  route: '/database',
  nav: '/database',
  async render(sluice, view) {
    // One statement for the tables and the horizon (inspect.database()), one for the schema and maintenance.
    const [health, status] = await Promise.all([
      sluice.inspect.database(view.horizonWarning, { queries: view.sessionQueries }),
      sluice.inspect.status(),
    ])
    const now = new Date(health.now).getTime()
    const warning = health.warning
      ? html`<p role="alert" data-xmin-warning class="flash error">${health.warning}</p>`
      : EMPTY
    const tables = table(
      'Tables',
      [
        'Table',
        'Live rows (est.)',
        'Dead rows (est.)',
        'Bloat (est.)',
        'Size',
        'Last autovacuum',
        'Last autoanalyze',
      ],
      health.tables.map(
        (t) => html`<tr data-table="${t.table}"><th scope="row" class="mono">${t.table}</th>
<td class="num">${number(t.liveTuples)}</td><td class="num">${number(t.deadTuples)}</td>
<td class="num${bloated(t) ? ' warn' : ''}"${bloated(t) ? html` data-bloated` : EMPTY}>${t.bloat === null ? '—' : `${(t.bloat * 100).toFixed(1)} %`}</td>
<td class="num">${bytes(t.bytes)}</td><td>${time(t.lastAutovacuum, now)}</td><td>${time(t.lastAutoanalyze, now)}</td></tr>`,
      ),
      'No table statistics yet.',
    )
    const horizon = table(
      'Oldest xmin holders',
      [
        'Kind',
        'Pid / name',
        'State',
        'Application',
        'xmin age',
        'Open for',
        ...(view.sessionQueries ? ['Query'] : []),
      ],
      health.horizon.map(
        (
          h,
        ) => html`<tr><td>${h.kind}</td><td class="mono">${h.pid ?? h.name ?? '—'}</td><td>${h.state ?? '—'}</td>
<td>${h.applicationName || '—'}</td><td class="num">${number(h.xminAge)} xacts</td>
<td class="num">${h.heldSeconds === null ? '—' : duration(h.heldSeconds * 1000)}</td>${
          view.sessionQueries ? html`<td class="mono">${h.query ?? ''}</td>` : EMPTY
        }</tr>`,
      ),
      'Nothing holds the horizon back.',
    )
    const tasks = table(
      'Maintenance tasks',
      ['Task', 'Last run', 'Next run', 'Rows', 'Last error'],
      status.maintenance.map(
        (
          m,
        ) => html`<tr><th scope="row">${m.task}</th><td>${time(m.lastStartedAt, now)}</td><td>${time(m.nextRunAt, now)}</td>
<td class="num">${m.lastRows ?? '—'}</td><td class="error-text">${m.lastError ?? ''}</td></tr>`,
      ),
      'Maintenance has not run yet.',
    )
    const body = html`${warning}<p>Schema version <strong>${status.version}</strong>, database clock ${time(health.now)}.</p>
${section('Transaction horizon', horizon)}
${section(
  'Tables',
  html`<p class="muted" data-estimates>Row counts are PostgreSQL's estimates (pg_stat_user_tables, updated by vacuum and analyze), not counts: they may differ from the rows there are. Bloat is flagged past ${BLOAT_WARN * 100} % dead rows on tables of ${bytes(BLOAT_FLOOR_BYTES)} or more.</p>${tables}`,
)}
${section('Maintenance', tasks)}`
    return { title: 'Database', body }
  },
}
