package studio

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/npmtest"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/server/studio"
)

// playwrightVersion and axeVersion are pinned so that the install cache
// (named for the exact specs) stays right.
const (
	playwrightVersion = "1.65.1"
	axeVersion        = "4.14.1"
)

const chromium = "/usr/bin/chromium"

// The owner every browser test signs in as, and the guest the tests that
// check what a guest may not do sign in as.
const (
	ownerEmail    = "ann@example.com"
	ownerPassword = "correct horse battery staple"
	guestEmail    = "gus@example.com"
	guestPassword = "a guest's long password"
)

// studioEnv is a whole server with the studio, a fake model and an owner
// who can sign in, plus the npm directory playwright-core and axe-core are
// installed in.
type studioEnv struct {
	*servertest.Env
	npmDir string
}

// newStudio skips without chromium, installs playwright-core and axe-core, and starts a
// server from opts with the studio and sign-in added (opts may be nil).
func newStudio(t *testing.T, opts *servertest.Options) *studioEnv {
	t.Helper()
	if _, err := exec.LookPath(chromium); err != nil {
		t.Skipf("%s is not installed (apt-get install -y chromium): the studio's browser tests need it", chromium)
	}
	dir := npmtest.Packages(t, "playwright", "playwright-core@"+playwrightVersion, "axe-core@"+axeVersion)
	if opts == nil {
		opts = &servertest.Options{}
	}
	if opts.Identity == nil {
		opts.Identity = &identity.Options{Hasher: identity.Argon2id{Memory: 64, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}}
	}
	opts.Studio = studio.Handler()
	env := servertest.New(t, opts)
	u, err := env.Identity.CreateUser(t.Context(), identity.NewUser{Email: ownerEmail, Password: ownerPassword})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Identity.AddMember(t.Context(), identity.CLI, env.Workspace.ID, u.ID, identity.RoleOwner); err != nil {
		t.Fatal(err)
	}
	return &studioEnv{Env: env, npmDir: dir}
}

// browserResult is what a browser script reports.
type browserResult struct {
	Steps      []string        `json:"steps"`
	Result     json.RawMessage `json:"result"`
	Console    []string        `json:"console"`
	Violations []string        `json:"csp_violations"`
	Scripts    []string        `json:"scripts_before_signin"`
	// Measures are the numbers the script reported with measure().
	Measures map[string]float64 `json:"measures"`
}

// browse runs body (JavaScript, the inside of an async function) in
// chromium against the server and returns what it set as result. The
// prelude gives body:
//
//	page, browser      the page (locale en-US, 15 s default timeout) and browser
//	url, args          the server's URL and the args given here (any JSON)
//	step(text)         a line for the test log
//	signIn(e, p)       signs in from / (the owner without arguments, else
//	                   the user of email e and password p), waiting for the nav
//	shot(name)         a screenshot when AGENTCRAFT_STUDIO_SCREENSHOTS names a directory
//	english            every text of the English catalogue (locales/en) and
//	                   the English the libraries show untranslated
//	englishLeft()      the English catalogue texts the page shows now
//	                   (text nodes and aria-labels; the product name and
//	                   text inside translate="no", the server's data, excepted)
//	measure(name, ms)  a number for the test to report
//	expectStatus(n)    an HTTP status the test provokes on purpose (a 409
//	                   the page shows beside its field): the console line
//	                   chromium logs for it fails nothing
//	axe()              runs axe-core on the page as it is now and returns
//	                   its violations ({id, impact, help, targets});
//	                   seriousOf(v) keeps the serious and critical ones
//
// Console errors (besides 401s and expectStatus's) and Content-Security-Policy violations
// fail the test; a thrown error fails it with the page's text.
func (e *studioEnv) browse(t *testing.T, body string, args any) browserResult {
	t.Helper()
	locales, err := filepath.Abs(filepath.Join("..", "..", "web", "src", "locales"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := json.Marshal(map[string]any{
		"url": e.URL, "email": ownerEmail, "password": ownerPassword, "chromium": chromium,
		"locales": locales, "shots": os.Getenv("AGENTCRAFT_STUDIO_SCREENSHOTS"), "args": args,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := npmtest.RunFor(t, 4*time.Minute, e.npmDir, prelude+body+postlude, string(cfg))
	var res browserResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("browser script output %q: %v", out, err)
	}
	for _, s := range res.Steps {
		t.Log("browser: " + s)
	}
	for _, v := range res.Violations {
		t.Errorf("the page broke its own Content-Security-Policy: %s", v)
	}
	for _, c := range res.Console {
		t.Errorf("browser console error: %s", c)
	}
	return res
}

// screenshotsWanted says whether this run keeps screenshots.
func screenshotsWanted() bool { return os.Getenv("AGENTCRAFT_STUDIO_SCREENSHOTS") != "" }

const prelude = `
import { chromium } from 'playwright-core'
import { readFileSync, readdirSync } from 'node:fs'
const cfg = JSON.parse(process.argv[2])
const { url, args } = cfg
const english = []
{
  const flat = (v) => typeof v === 'string' ? english.push(v) : Object.values(v).forEach(flat)
  for (const f of readdirSync(cfg.locales + '/en')) flat(JSON.parse(readFileSync(cfg.locales + '/en/' + f, 'utf8')))
}
// English that the libraries put on the page unless the studio translates
// it: @xyflow/react's default accessible names and keyboard help.
english.push('Control Panel', 'Zoom In', 'Zoom Out', 'Fit View', 'Toggle Interactivity', 'Mini Map', 'Handle',
  'Press enter or space to select a node. Press delete to remove it and escape to cancel.',
  'Press enter or space to select an edge. You can then press delete to remove it or escape to cancel.')
const productName = JSON.parse(readFileSync(cfg.locales + '/en/app.json', 'utf8')).name
const steps = [], consoleErrors = [], measures = {}
const step = (s) => steps.push(s)
const expectedStatus = new Set([401])
const expectStatus = (n) => expectedStatus.add(n)
const measure = (name, v) => { measures[name] = v }
const scriptsBeforeSignIn = []
let signInShown = false
const browser = await chromium.launch({ executablePath: cfg.chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] })
const page = await browser.newPage({ locale: 'en-US', viewport: { width: 1280, height: 800 } })
page.setDefaultTimeout(15000)
page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()) })
page.on('pageerror', (e) => consoleErrors.push('uncaught: ' + e.message))
page.on('request', (r) => {
  if (r.resourceType() === 'script' && !signInShown) scriptsBeforeSignIn.push(new URL(r.url()).pathname)
})
await page.addInitScript(() => {
  document.addEventListener('securitypolicyviolation', (e) => {
    console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI)
  })
})
const englishLeft = () => page.evaluate(({ english, keep }) => {
  const seen = new Set()
  const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
  // Text marked translate="no" is data (a tool's description from the
  // server), not the studio's words, whatever language it is in.
  for (let n = w.nextNode(); n; n = w.nextNode()) if (!n.parentElement?.closest('[translate=no]')) seen.add(n.textContent.trim())
  for (const el of document.querySelectorAll('[aria-label],[placeholder],[title]')) {
    for (const a of ['aria-label', 'placeholder', 'title']) if (el.hasAttribute(a)) seen.add(el.getAttribute(a).trim())
  }
  // A text with {{values}} matches what it reads once they are filled in:
  // "Saved as version {{n}}." is left in English as "Saved as version 5.".
  const shown = [...seen].filter((t) => t !== '')
  const matches = (s) => {
    if (!s.includes('{{')) return seen.has(s)
    const parts = s.split(/\{\{[^}]*\}\}/).map((p) => p.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&'))
    // Only the words around the values can be English: a text that is
    // values and punctuation ("{{name}} ({{kind}})") says nothing.
    if (s.replace(/\{\{[^}]*\}\}/g, '').replace(/[^A-Za-z]/g, '').length < 3) return false
    const re = new RegExp('^' + parts.join('.+?') + '$')
    return shown.some((t) => re.test(t))
  }
  return english.filter((s) => s !== keep && matches(s))
}, { english, keep: productName })
// axe-core goes in by CDP evaluation, which the page's strict CSP allows
// (a <script> tag from page.addScriptTag would be blocked).
const axeSource = readFileSync(process.cwd() + '/node_modules/axe-core/axe.min.js', 'utf8')
const axe = async () => {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(axeSource + '\n;true')
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] })
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ') + (n.failureSummary ? ' (' + n.failureSummary.replace(/\s+/g, ' ') + ')' : '')) }))
  })
}
const seriousOf = (vs) => vs.filter((v) => v.impact === 'serious' || v.impact === 'critical')
const shot = async (name) => { if (cfg.shots) await page.screenshot({ path: cfg.shots + '/' + name + '.png' }) }
const signIn = async (email = cfg.email, password = cfg.password) => {
  await page.goto(url + '/')
  await page.getByRole('heading', { name: 'Sign in to AgentCraft' }).waitFor()
  signInShown = true
  await page.getByRole('textbox', { name: 'Email' }).fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('navigation', { name: 'Pages', exact: true }).waitFor()
}
let result = null
try {
`

const postlude = `
} catch (e) {
  const text = await page.locator('body').innerText().catch(() => '')
  console.error(String(e && e.stack || e) + '\nsteps: ' + steps.join(' | ') + '\nconsole: ' + consoleErrors.join(' | ') + '\n--- page text ---\n' + text)
  await browser.close()
  process.exit(1)
}
await browser.close()
const violations = consoleErrors.filter((e) => e.startsWith('CSP violation'))
console.log(JSON.stringify({ steps, result, measures, scripts_before_signin: scriptsBeforeSignIn,
  console: consoleErrors.filter((e) => !e.startsWith('CSP violation') && ![...expectedStatus].some((n) => e.includes('status of ' + n + ' '))), csp_violations: violations }))
`
