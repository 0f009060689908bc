// The dashboard's only script (CSP: script-src 'self'). Everything works without it; it adds
// the theme toggle, automatic refresh, charts, sparklines and watched partitions.
;(() => {
  const root = document.documentElement
  const store = {
    get(key) {
      try {
        return localStorage.getItem(`sluice.${key}`)
      } catch {
        return null
      }
    },
    set(key, value) {
      try {
        localStorage.setItem(`sluice.${key}`, value)
      } catch {}
    },
  }

  // ---- Theme: the stored choice, else the system's; the toggle flips and stores it.
  const systemDark = window.matchMedia?.('(prefers-color-scheme: dark)')
  const applyTheme = () => {
    const chosen = store.get('theme')
    root.dataset.theme =
      chosen === 'dark' || chosen === 'light' ? chosen : systemDark?.matches ? 'dark' : 'light'
  }
  applyTheme()
  systemDark?.addEventListener?.('change', applyTheme)

  const charts = []
  const COLORS = { completed: '--ok', failed: '--warn', dead: '--bad', expired: '--muted' }
  const css = (name) => getComputedStyle(document.body).getPropertyValue(name).trim()

  // ---- Throughput charts (uPlot), from the JSON the page embeds.
  function drawCharts() {
    while (charts.length) charts.pop().destroy()
    if (typeof window.uPlot !== 'function') return
    for (const el of document.querySelectorAll('[data-chart="throughput"]')) {
      const source = document.getElementById(el.dataset.source)
      if (!source) continue
      let rows
      try {
        rows = JSON.parse(source.textContent || '[]')
      } catch {
        continue
      }
      el.textContent = ''
      if (!rows.length) {
        el.textContent = 'Nothing finished in this window.'
        continue
      }
      // The outcomes this chart's rows carry (the overview has completed and failed only).
      const keys = Object.keys(COLORS).filter((key) => key in rows[0])
      // Rows may list only the minutes where something finished: fill the window's others with zeros.
      const from = Number(el.dataset.from)
      const to = Number(el.dataset.to)
      if (Number.isFinite(from) && Number.isFinite(to) && to > from && (to - from) / 60 <= 20_000) {
        const byMinute = new Map(rows.map((r) => [Date.parse(r.minute) / 1000, r]))
        rows = []
        for (let x = from; x <= to; x += 60)
          rows.push({ minute: new Date(x * 1000).toISOString(), ...byMinute.get(x) })
      }
      const xs = rows.map((r) => Date.parse(r.minute) / 1000)
      const width = Math.max(240, el.clientWidth - 8)
      charts.push(
        new window.uPlot(
          {
            width,
            height: 200,
            axes: [
              { stroke: css('--muted'), grid: { stroke: css('--grid') } },
              { stroke: css('--muted'), grid: { stroke: css('--grid') } },
            ],
            series: [
              {},
              ...keys.map((key) => ({
                label: key,
                stroke: css(COLORS[key]),
                width: 2,
                points: { show: false },
              })),
            ],
          },
          [xs, ...keys.map((key) => rows.map((r) => r[key] ?? 0))],
          el,
        ),
      )
    }
  }

  // ---- EWMA lag sparklines: samples of this browser's page loads, kept per partition.
  function drawSparklines() {
    for (const canvas of document.querySelectorAll('canvas[data-sparkline]')) {
      const key = `lag.${canvas.dataset.sparkline}`
      let samples = []
      try {
        samples = JSON.parse(store.get(key) || '[]')
      } catch {}
      const value = canvas.dataset.value === '' ? null : Number(canvas.dataset.value)
      if (value !== null && Number.isFinite(value)) {
        samples.push(value)
        samples = samples.slice(-40)
        store.set(key, JSON.stringify(samples))
      }
      const ctx = canvas.getContext('2d')
      if (!ctx || samples.length < 2) continue
      const max = Math.max(...samples, 1)
      ctx.clearRect(0, 0, canvas.width, canvas.height)
      ctx.strokeStyle = css('--accent')
      ctx.lineWidth = 1.5
      ctx.beginPath()
      samples.forEach((v, i) => {
        const x = (i / (samples.length - 1)) * (canvas.width - 2) + 1
        const y = canvas.height - 1 - (v / max) * (canvas.height - 2)
        i === 0 ? ctx.moveTo(x, y) : ctx.lineTo(x, y)
      })
      ctx.stroke()
    }
  }

  // ---- Watched partitions: a list in localStorage; a star per row, a filter to show only them.
  const watched = () => {
    try {
      return new Set(JSON.parse(store.get('watched') || '[]'))
    } catch {
      return new Set()
    }
  }
  function showWatched() {
    const set = watched()
    const only = document.querySelector('[data-watched-only]')
    if (only) only.checked = store.get('watchedOnly') === '1'
    for (const button of document.querySelectorAll('[data-watch]')) {
      const on = set.has(button.dataset.watch)
      button.setAttribute('aria-pressed', String(on))
      button.textContent = on ? '★' : '☆'
      const row = button.closest('tr')
      if (row) row.hidden = Boolean(only?.checked) && !on
    }
  }
  document.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target : null
    const watch = target?.closest('[data-watch]')
    if (watch) {
      const set = watched()
      const key = watch.dataset.watch
      set.has(key) ? set.delete(key) : set.add(key)
      store.set('watched', JSON.stringify([...set]))
      showWatched()
      return
    }
    if (target?.closest('[data-theme-toggle]')) {
      store.set('theme', root.dataset.theme === 'dark' ? 'light' : 'dark')
      applyTheme()
      drawCharts()
    }
  })
  document.addEventListener('change', (event) => {
    const target = event.target
    if (target instanceof HTMLInputElement && target.matches('[data-watched-only]')) {
      store.set('watchedOnly', target.checked ? '1' : '0')
      showWatched()
    }
    if (target instanceof HTMLSelectElement && target.matches('[data-refresh]')) {
      store.set('refresh', target.value)
      schedule()
    }
  })

  // ---- Automatic refresh: fetch this page again and swap <main>, keeping the scroll position.
  let timer
  const refreshSeconds = () => {
    const stored = store.get('refresh')
    const value = stored ?? document.body.dataset.defaultRefresh ?? '0'
    return ['0', '2', '5', '15'].includes(value) ? Number(value) : 0
  }
  function schedule() {
    clearTimeout(timer)
    const seconds = refreshSeconds()
    const select = document.querySelector('[data-refresh]')
    if (select) select.value = String(seconds)
    // Never on the answer to a form or an error page: their address is not a page to fetch again.
    if (seconds > 0 && !('noRefresh' in document.body.dataset)) timer = setTimeout(refresh, seconds * 1000)
  }
  async function refresh() {
    const busy = document.activeElement?.closest?.('main form') || document.hidden
    if (!busy) {
      try {
        const response = await fetch(location.href, {
          credentials: 'same-origin',
          headers: { Accept: 'text/html' },
        })
        if (response.redirected || !response.ok) {
          // A GET of this address (the log-in page once the session has ended), never a form sent again.
          location.assign(location.href)
          return
        }
        const next = new DOMParser()
          .parseFromString(await response.text(), 'text/html')
          .getElementById('main')
        const main = document.getElementById('main')
        if (next && main) {
          const y = window.scrollY
          main.replaceChildren(...next.childNodes)
          window.scrollTo(0, y)
          enhance()
        }
      } catch {}
    }
    schedule()
  }

  function enhance() {
    drawCharts()
    drawSparklines()
    showWatched()
  }

  document.addEventListener('DOMContentLoaded', () => {
    enhance()
    schedule()
  })
  let resizing
  window.addEventListener('resize', () => {
    clearTimeout(resizing)
    resizing = setTimeout(drawCharts, 200)
  })
})()
