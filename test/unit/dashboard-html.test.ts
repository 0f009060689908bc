import { describe, expect, test } from 'vitest'
import { html } from '../../src/http/dashboard/html.js'

describe("the dashboard's html", () => {
  test('shows the bidi controls of text as code points, so text cannot run backwards; attributes keep theirs', async () => {
    const evil = 'error \u202Eevil\u202C end'
    const page = String(
      await html`<td>${evil}</td><input type="hidden" name="partition" value="${evil}"><p title="${evil}">${'\u2066x\u2069'}</p>`,
    )
    expect(page).toBe(
      '<td>error ⟨U+202E⟩evil⟨U+202C⟩ end</td>' +
        `<input type="hidden" name="partition" value="${evil}">` +
        `<p title="${evil}">⟨U+2066⟩x⟨U+2069⟩</p>`,
    )
    // Still escaped as before.
    expect(String(await html`<td>${'<b>&'}</td>`)).toBe('<td>&lt;b&gt;&amp;</td>')
  })
})
