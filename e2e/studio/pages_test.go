package studio

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/skill"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/trigger"
)

// interactiveBudget is how long a deep link may take, from the start of
// the navigation, until the page's h1 shows, nothing says "Loading…", its
// data has come (no fetch in flight, the DOM settled) and its first
// control takes focus.
const interactiveBudget = 1500.0 // ms

// pagesFlow is a small workflow with an agent, a human and a code node.
const pagesFlow = `{"name":"review","nodes":[{"id":"start","type":"start"},
{"id":"draft","type":"agent","config":{"model":"fake/m","prompt":"Draft: {{input}}"}},
{"id":"ask","type":"human","config":{"prompt":"Publish {{nodes.draft.output}}?","form_schema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}},
{"id":"final","type":"code","config":{"mode":"template","template":"{{nodes.draft.output}} / {{nodes.ask.output.ok}}"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"ask"},{"id":"e3","source":"ask","target":"final"},{"id":"e4","source":"final","target":"end"}]}`

// skipLink is the shell's first link, to <main> (app.skip).
const skipLink = "Skip to content"

// axeViolation is one axe-core rule a page breaks, with where.
type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

func (v axeViolation) String() string {
	return fmt.Sprintf("%s (%s): %s at %s", v.ID, v.Impact, v.Help, strings.Join(v.Targets, "; "))
}

// pageCheck is what the browser found on one page.
type pageCheck struct {
	Path string `json:"path"`
	// Sub marks a subpage found by a link inside a page: checked like a
	// page, its time reported but not held to the budget.
	Sub         bool           `json:"sub"`
	Slug        string         `json:"slug"`
	Nav         string         `json:"nav"`
	H1          []string       `json:"h1"`
	Interactive float64        `json:"interactive_ms"`
	DOMReady    float64        `json:"dom_ready_ms"`
	Controls    int            `json:"controls"`
	AxeLight    []axeViolation `json:"axe_light"`
	AxeDark     []axeViolation `json:"axe_dark"`
	// EnglishLeft holds, per language, the English texts still shown.
	EnglishLeft map[string][]string `json:"english_left"`
	// FocusOrder is what Tab reached from the page's start; FocusGaps
	// those of them that showed no focus indicator.
	FocusOrder []string `json:"focus_order"`
	FocusGaps  []string `json:"focus_gaps"`
}

// TestEveryPage runs the cross-cutting acceptance checks on sign-in and on
// every page the nav links to (found from the nav, so pages added later
// are covered without touching this test): no serious or critical axe-core
// violation in light or dark theme, no English left in 日本語 or 繁體中文,
// interactive within 1.5 s of a deep link, and screenshots of each
// (AGENTCRAFT_STUDIO_SCREENSHOTS=/abs/dir keeps them).
func TestEveryPage(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	env := newStudio(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help.", MaxSteps: 3, Tools: []string{"calculator"}}},
		// Every surface a page may call, so that each page loads as in a
		// full server.
		Memory:    true,
		Knowledge: true,
		Workflows: true,
		MCP:       true, // the service tester calls /mcp
		Tasks:     true, // tasks and the approvals inbox
	})
	// Data for the pages to show, so that lists link to their subpages
	// (the Studio's canvas of this workflow).
	if _, err := env.Store.Workflows().Create(t.Context(), store.Workflow{WorkspaceID: env.Workspace.ID, Name: "review", Definition: json.RawMessage(pagesFlow)}); err != nil {
		t.Fatal(err)
	}
	// A schedule and a webhook, so the Triggers page lists both kinds
	// with their actions and a next fire.
	for _, sp := range []string{
		`{"name":"morning-report","kind":"schedule","workflow":"review","schedule":"0 9 * * 1-5","timezone":"Asia/Tokyo"}`,
		`{"name":"github","kind":"webhook","agent":"helper"}`,
	} {
		var spec trigger.Spec
		if err := json.Unmarshal([]byte(sp), &spec); err != nil {
			t.Fatal(err)
		}
		if _, _, err := env.Triggers.Create(t.Context(), env.Workspace.ID, spec); err != nil {
			t.Fatal(err)
		}
	}
	// A workspace skill beside the built-ins, so the Skills page lists
	// both kinds with their actions.
	if _, err := env.Platform.Skills().Create(t.Context(), env.Workspace.ID, skill.Skill{Name: "release-notes",
		Description: "Write release notes from merged changes.", Instructions: "Group by Added, Changed and Fixed.",
		Files: []skill.File{{Path: "templates/notes.md", Data: []byte("## Added\n")}}}); err != nil {
		t.Fatal(err)
	}
	// Usage and audit events, so the Usage page draws its charts and the
	// Audit log its table and pager.
	now := time.Now()
	seedUsage(t, env, ownerActor(t, env), now)
	seedAudit(t, env, ownerActor(t, env), now)
	// A task waiting on an approval, with a step, so that the inbox lists
	// a request and the task page shows its evidence.
	seedApprovalTask(t, env, approvalSeed{title: "Book the meeting room", source: "line", capability: store.CapabilityLow,
		summary: "Book room 3 for Friday 10:00", tool: "calendar_create_event"})
	res := env.browse(t, everyPageScript, nil)
	var out struct {
		SignIn pageCheck   `json:"signin"`
		Pages  []pageCheck `json:"pages"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	if len(out.Pages) == 0 {
		t.Fatal("the nav named Pages links to no page")
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-22s %8s %8s %8s %10s %10s %s %s\n", "page", "inter.ms", "dom ms", "controls", "axe light", "axe dark", "english left (ja/zh-TW)", "tab stops")
	for _, p := range append([]pageCheck{out.SignIn}, out.Pages...) {
		left := 0
		for _, l := range p.EnglishLeft {
			left += len(l)
		}
		fmt.Fprintf(&table, "%-22s %8.0f %8.0f %8d %4d (%2d!) %4d (%2d!) %23d %d (%d without indicator)\n", p.Path, p.Interactive, p.DOMReady, p.Controls,
			len(p.AxeLight), len(serious(p.AxeLight)), len(p.AxeDark), len(serious(p.AxeDark)), left, len(p.FocusOrder), len(p.FocusGaps))
		checkPage(t, p)
	}
	t.Log("per page (axe: all violations, (N!) serious or critical):" + table.String())
}

// checkPage fails the test for each acceptance check p misses.
func checkPage(t *testing.T, p pageCheck) {
	t.Helper()
	for theme, vs := range map[string][]axeViolation{"light": p.AxeLight, "dark": p.AxeDark} {
		for _, v := range vs {
			if v.Impact == "serious" || v.Impact == "critical" {
				t.Errorf("%s in the %s theme: axe-core %s", p.Path, theme, v)
			} else {
				t.Logf("%s in the %s theme (minor, not failing): axe-core %s", p.Path, theme, v)
			}
		}
	}
	for lang, left := range p.EnglishLeft {
		if len(left) > 0 {
			t.Errorf("%s in %s still shows English from the catalogue: %q", p.Path, lang, left)
		}
	}
	if len(p.EnglishLeft) != 2 {
		t.Errorf("%s was checked in %d languages besides English; want ja and zh-TW", p.Path, len(p.EnglishLeft))
	}
	if len(p.FocusOrder) == 0 {
		t.Errorf("%s: Tab reaches no control", p.Path)
	}
	if p.Path != "/signin" && len(p.FocusOrder) > 0 && p.FocusOrder[0] != `a "`+skipLink+`"` {
		t.Errorf("%s: the first Tab reaches %s; want the skip link %q", p.Path, p.FocusOrder[0], skipLink)
	}
	for _, g := range p.FocusGaps {
		t.Errorf("%s: %s shows no focus indicator when reached with Tab", p.Path, g)
	}
	if len(p.H1) != 1 {
		t.Errorf("%s has %d h1 headings %q; want exactly one", p.Path, len(p.H1), p.H1)
	}
	if p.Interactive <= 0 || (!p.Sub && p.Interactive > interactiveBudget) {
		t.Errorf("%s became interactive %.0f ms after a deep link; the budget is %.0f ms", p.Path, p.Interactive, interactiveBudget)
	}
}

func serious(vs []axeViolation) []axeViolation {
	var out []axeViolation
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			out = append(out, v)
		}
	}
	return out
}

// everyPageScript checks sign-in, signs in, then checks each page the nav
// links to. Theme and language are chosen as a user would (the top bar's
// toggle and select) on pages, and through the saved choice (localStorage,
// which the studio reads on load) on sign-in, which has no top bar.
const everyPageScript = `
const langs = ['en', 'ja', 'zh-TW']
const cat = (lang, area) => JSON.parse(readFileSync(cfg.locales + '/' + lang + '/' + area + '.json', 'utf8'))
const loadingTexts = langs.map((l) => cat(l, 'app').loading)
const topbar = Object.fromEntries(langs.map((l) => [l, cat(l, 'topbar')]))
const navLabel = Object.fromEntries(langs.map((l) => [l, cat(l, 'nav').label]))
const signInTitle = Object.fromEntries(langs.map((l) => [l, cat(l, 'signin').title]))
// A translation the catalogue keeps as the English text on purpose (the
// catalogue test allows only the product name) is no leftover.
const flatten = (o, pre = '', acc = {}) => {
  for (const [k, v] of Object.entries(o)) typeof v === 'string' ? (acc[pre + k] = v) : flatten(v, pre + k + '.', acc)
  return acc
}
const catalogue = (lang) => {
  const acc = {}
  for (const f of readdirSync(cfg.locales + '/' + lang)) flatten(JSON.parse(readFileSync(cfg.locales + '/' + lang + '/' + f, 'utf8')), f.replace(/\.json$/, '') + '.', acc)
  return acc
}
const enCat = catalogue('en')
const kept = Object.fromEntries(langs.slice(1).map((l) => {
  const c = catalogue(l)
  return [l, new Set(Object.keys(enCat).filter((k) => c[k] === enCat[k]).map((k) => enCat[k]))]
}))
const leftIn = async (lang) => (await englishLeft()).filter((s) => !kept[lang].has(s))

// Every page load counts its fetches in flight (until their headers
// arrive, so an event stream counts as answered) and notes when the DOM
// last changed: a page whose data is still coming is not ready.
await page.addInitScript(() => {
  window.__inflight = 0
  window.__lastMutation = 0
  const fetch0 = window.fetch
  window.fetch = (...a) => {
    window.__inflight++
    const p = fetch0(...a)
    p.finally(() => window.__inflight--).catch(() => {})
    return p
  }
  new MutationObserver(() => { window.__lastMutation = performance.now() })
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true })
})
page.on('response', (r) => { if (r.status() >= 500) step('HTTP ' + r.status() + ' from ' + r.request().method() + ' ' + new URL(r.url()).pathname + ' on ' + new URL(page.url()).pathname) })

// quiet is how long the DOM must stay unchanged, with no fetch in flight,
// before a page counts as rendered.
const quiet = 100

// ready resolves, in the page, at the first animation frame where one h1
// shows, no status says Loading…, no fetch is in flight and the DOM has
// been still for quiet ms, and the first control in <main> takes focus
// (the page answers input). Its time is when the DOM last changed before
// that (performance.now() counts from the start of the navigation).
const ready = async () => {
  const h = await page.waitForFunction(([loading, quiet]) => {
    if (window.__inflight > 0 || performance.now() - window.__lastMutation < quiet) return false
    const h1 = document.querySelector('h1')
    if (!h1 || !h1.checkVisibility() || !h1.textContent.trim()) return false
    // Still loading: a status saying Loading… (the shell's, or a page's
    // own text starting so), or a region marked aria-busy.
    for (const s of document.querySelectorAll('[role=status]')) {
      const text = s.textContent.trim()
      if (loading.some((l) => text === l || text.startsWith(l.replace(/…$/, '')))) return false
    }
    if (document.querySelector('main [aria-busy=true]')) return false
    const root = document.querySelector('main') || document.body
    const controls = [...root.querySelectorAll('a[href],button:not([disabled]),input:not([disabled]):not([type=hidden]),select:not([disabled]),textarea:not([disabled]),[tabindex="0"]')]
      .filter((el) => el.checkVisibility())
    if (controls.length) {
      const before = document.activeElement
      controls[0].focus({ preventScroll: true })
      const ok = document.activeElement === controls[0]
      controls[0].blur()
      if (before && before !== document.body && before.focus) before.focus({ preventScroll: true })
      if (!ok) return false
    }
    return { at: Math.max(window.__lastMutation, performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd ?? 0), controls: controls.length }
  }, [loadingTexts, quiet], { polling: 'raf', timeout: 15000 })
  return h.jsonValue()
}
// focusWalk tabs through the page from its start and returns what took
// focus, in order, and which of those showed no focus indicator (no
// outline, no box shadow).
const focusWalk = async () => {
  await page.evaluate(() => {
    for (const el of document.querySelectorAll('[data-focus-walked]')) el.removeAttribute('data-focus-walked')
    // Tab starts after the focused element: focus the body itself first.
    document.body.tabIndex = -1
    document.body.focus()
    document.body.removeAttribute('tabindex')
  })
  const order = [], gaps = []
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab')
    const r = await page.evaluate(() => {
      const el = document.activeElement
      if (!el || el === document.body || el.hasAttribute('data-focus-walked')) return null
      el.setAttribute('data-focus-walked', '')
      const s = getComputedStyle(el)
      let shown = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none'
      if (!shown && el instanceof SVGElement) {
        // An SVG control (a canvas edge) may show focus by restyling its
        // shapes: compare them focused and not.
        const look = () => [...el.querySelectorAll('*')].map((c) => { const cs = getComputedStyle(c); return cs.stroke + cs.strokeWidth + cs.filter + cs.fill + cs.opacity }).join('|')
        const focused = look()
        el.blur()
        shown = look() !== focused
        el.focus({ preventScroll: true })
      }
      const name = (el.getAttribute('aria-label') || el.innerText || el.getAttribute('placeholder') || el.id || '').trim().replace(/\s+/g, ' ').slice(0, 40)
      return { what: el.tagName.toLowerCase() + (name ? ' "' + name + '"' : ''), shown }
    })
    if (!r) break
    order.push(r.what)
    if (!r.shown) gaps.push(r.what)
  }
  await page.evaluate(() => document.activeElement?.blur?.())
  return { order, gaps }
}
const domReady = () => page.evaluate(() => performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd ?? 0)
const h1s = () => page.getByRole('heading', { level: 1 }).allInnerTexts()
const setTheme = async (theme) => {
  const dark = theme === 'dark'
  if (await page.evaluate(() => document.documentElement.classList.contains('dark')) === dark) return
  await page.getByRole('button', { name: dark ? topbar.en.themeToDark : topbar.en.themeToLight }).click()
  await page.waitForFunction((dark) => document.documentElement.classList.contains('dark') === dark, dark)
}
const setLanguage = async (from, to) => {
  await page.getByRole('combobox', { name: topbar[from].language }).selectOption(to)
  await page.waitForFunction((to) => document.documentElement.lang === to, to)
  await page.getByRole('navigation', { name: navLabel[to], exact: true }).waitFor()
  await ready()
}
const save = (theme, lang) => page.evaluate(([theme, lang]) => {
  localStorage.setItem('agentcraft.theme', theme)
  localStorage.setItem('agentcraft.language', lang)
}, [theme, lang])

// firstLoad records a page just loaded (light, English): time to
// interactive, its controls, h1s, axe and the Tab walk, with a screenshot
// when shotName is given.
const firstLoad = async (rec, shotName) => {
  const r = await ready()
  rec.interactive_ms = r.at
  rec.controls = r.controls
  rec.dom_ready_ms = await domReady()
  rec.h1 = await h1s()
  rec.axe_light = await axe()
  if (shotName) await shot(shotName)
  const walk = await focusWalk()
  rec.focus_order = walk.order
  rec.focus_gaps = walk.gaps
}
// themesAndLanguages checks a page of the shell in the dark theme and in
// 日本語 and 繁體中文, and leaves it light and English; screenshots when slug
// is given.
const themesAndLanguages = async (rec, slug) => {
  await setTheme('dark')
  await ready()
  rec.axe_dark = await axe()
  if (slug) await shot(slug + '-dark-en')
  await setTheme('light')
  await setLanguage('en', 'ja')
  rec.english_left.ja = await leftIn('ja')
  if (slug) await shot(slug + '-light-ja')
  await setLanguage('ja', 'zh-TW')
  rec.english_left['zh-TW'] = await leftIn('zh-TW')
  await setLanguage('zh-TW', 'en')
}

// Sign-in, before any session.
const signin = { path: '/signin', slug: 'signin', english_left: {} }
await page.goto(url + '/signin')
await page.getByRole('heading', { name: signInTitle.en }).waitFor()
signInShown = true
await save('light', 'en')
await page.goto(url + '/signin')
await firstLoad(signin, 'signin-light-en')
await save('dark', 'en')
await page.reload()
await page.getByRole('heading', { name: signInTitle.en }).waitFor()
await ready()
signin.axe_dark = await axe()
await shot('signin-dark-en')
for (const lang of ['ja', 'zh-TW']) {
  await save('light', lang)
  await page.reload()
  await page.getByRole('heading', { name: signInTitle[lang] }).waitFor()
  await ready()
  const htmlLang = await page.evaluate(() => document.documentElement.lang)
  if (htmlLang !== lang) throw new Error('sign-in in ' + lang + ' has <html lang="' + htmlLang + '">')
  signin.english_left[lang] = await leftIn(lang)
  if (lang === 'ja') await shot('signin-light-ja')
}
await save('light', 'en')
step('sign-in: interactive ' + signin.interactive_ms.toFixed(0) + ' ms, axe ' + signin.axe_light.length + '/' + signin.axe_dark.length)

await signIn()
const links = page.getByRole('navigation', { name: navLabel.en, exact: true }).getByRole('link')
const found = []
for (const l of await links.all()) found.push({ nav: (await l.innerText()).trim(), path: new URL(await l.getAttribute('href'), url).pathname })
step('the nav links to ' + found.map((p) => p.nav + ' ' + p.path).join(', '))

const pages = []
for (const { nav, path } of found) {
  const slug = path.replace(/^\/+|\/+$/g, '').replace(/\//g, '-') || 'home'
  const p = { path, slug, nav, english_left: {} }
  // A fresh load of the deep link, light and English (saved choices).
  await page.goto(url + path)
  await firstLoad(p, slug + '-light-en')
  measure(slug + '.interactive_ms', p.interactive_ms)
  await themesAndLanguages(p, slug)
  pages.push(p)
  // One subpage (a link inside the page to a deeper path, such as a run
  // or an agent), when the page shows one: the same checks but timing.
  const inner = page.locator('main a[href^="' + path + '/"]')
  const deeper = (await inner.count()) > 0 ? await inner.first().getAttribute('href') : null
  if (deeper) {
    const subPath = new URL(deeper, url).pathname
    const sub = { path: subPath, slug: slug + '-detail', nav, sub: true, english_left: {} }
    await page.goto(url + subPath)
    await firstLoad(sub)
    await themesAndLanguages(sub)
    step(subPath + ' (subpage): interactive ' + sub.interactive_ms.toFixed(0) + ' ms, axe ' + sub.axe_light.length + '/' + sub.axe_dark.length)
    pages.push(sub)
  }
  step(path + ': interactive ' + p.interactive_ms.toFixed(0) + ' ms, axe ' + p.axe_light.length + '/' + p.axe_dark.length +
    ', English left ' + p.english_left.ja.length + '/' + p.english_left['zh-TW'].length)
}
result = { signin, pages }
`
