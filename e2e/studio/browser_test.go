// Package studio drives the web studio in a real browser: Debian's
// chromium under playwright-core (installed by the test into the user's
// cache directory, as the other npm interop tests do), against a whole
// server started in the test with a fake model. It skips when node, npm
// or chromium is missing; .ci/run installs them.
package studio

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/npmtest"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/server/studio"
)

// playwrightVersion is pinned so that the install cache stays right.
const playwrightVersion = "1.65.1"

const chromium = "/usr/bin/chromium"

// The fake model's streamed answer, after one calculator call, and its
// answer to the next message in the same thread.
const (
	answer       = "Six times seven is 42, as the calculator says."
	secondAnswer = "Forty-three."
)

func TestSignInChatAndLanguage(t *testing.T) {
	if _, err := exec.LookPath(chromium); err != nil {
		t.Skipf("%s is not installed (apt-get install -y chromium): the studio's browser test needs it", chromium)
	}
	dir := npmtest.Packages(t, "playwright", "playwright-core@"+playwrightVersion)

	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help.", MaxSteps: 3, Tools: []string{"calculator"}}},
		Memory:    true,
		Identity:  &identity.Options{Hasher: identity.Argon2id{Memory: 64, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}},
		Studio:    studio.Handler(),
	})
	const email, password = "ann@example.com", "correct horse battery staple"
	u, err := env.Identity.CreateUser(t.Context(), identity.NewUser{Email: email, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Identity.AddMember(t.Context(), identity.CLI, env.Workspace.ID, u.ID, identity.RoleOwner); err != nil {
		t.Fatal(err)
	}
	toolResult := servertest.ScriptToolCall(t, fake, llm.ToolCall{ID: "call_1", Name: "calculator", Arguments: `{"expression":"6*7"}`}, answer)

	// AGENTCRAFT_STUDIO_SCREENSHOTS names a directory to keep screenshots
	// of the pages in (light/English, dark/Japanese) for a reader.
	fake.Push(llmtest.Turn{Text: secondAnswer})
	catalog, err := filepath.Abs(filepath.Join("..", "..", "web", "src", "locales", "en.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := npmtest.Run(t, dir, browserScript, env.URL, email, password, chromium, answer, secondAnswer, catalog, os.Getenv("AGENTCRAFT_STUDIO_SCREENSHOTS"))
	var res struct {
		Steps      []string `json:"steps"`
		Assistant  string   `json:"assistant"`
		NavJA      string   `json:"nav_ja"`
		Console    []string `json:"console"`
		Initial    []string `json:"initial_scripts"`
		Stored     []string `json:"stored"`
		Violations []string `json:"csp_violations"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("browser script output %q: %v", out, err)
	}
	for _, s := range res.Steps {
		t.Log("browser: " + s)
	}
	if !strings.Contains(res.Assistant, answer) || !strings.Contains(res.Assistant, "1 tool call") {
		t.Errorf("the assistant's message reads %q; want the fake's answer with its tool call folded beneath", res.Assistant)
	}
	wantStored := []string{"user: What is six times seven?", "assistant: " + answer, "user: And plus one?", "assistant: " + secondAnswer}
	if !slices.Equal(res.Stored, wantStored) {
		t.Errorf("the stored thread is %q; want each turn once: %q", res.Stored, wantStored)
	}
	if got := toolResult(); !strings.Contains(got, "42") {
		t.Errorf("the model was shown the calculator's result %q; want 42", got)
	}
	if res.NavJA != "チャット" {
		t.Errorf("after choosing 日本語 the nav's link reads %q; want チャット", res.NavJA)
	}
	if len(res.Violations) > 0 {
		t.Errorf("the page broke its own Content-Security-Policy: %q", res.Violations)
	}
	for _, c := range res.Console {
		t.Errorf("browser console error: %s", c)
	}
	// The budget is what the browser needed to show sign-in, gzipped.
	if len(res.Initial) == 0 {
		t.Fatal("the browser fetched no script before the sign-in page showed")
	}
	var raw, gz int
	for _, p := range res.Initial {
		b, err := os.ReadFile(filepath.Join("..", "..", "server", "studio", "dist", filepath.FromSlash(strings.TrimPrefix(p, "/"))))
		if err != nil {
			t.Fatalf("the browser fetched %s, which the build lacks: %v", p, err)
		}
		raw += len(b)
		gz += gzipSize(t, b)
	}
	t.Logf("initial JavaScript (%s): %.1f KB, %.1f KB gzip; budget 350 KB gzip", strings.Join(res.Initial, ", "), float64(raw)/1024, float64(gz)/1024)
	if gz > 350*1024 {
		t.Errorf("initial JavaScript is %.1f KB gzip; the budget is 350 KB", float64(gz)/1024)
	}
}

func gzipSize(t *testing.T, b []byte) int {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

// browserScript signs in, chats and switches language, finding every
// element by role and accessible name; it prints what it saw as JSON.
// Arguments: URL, email, password, chromium path, expected answer.
const browserScript = `
import { chromium } from 'playwright-core'
import { readFileSync } from 'node:fs'
const [url, email, password, executablePath, answer, secondAnswer, catalogPath, shots] = process.argv.slice(2)
// The English catalogue's texts: none may be seen once another language is chosen.
const english = []
const flat = (v) => typeof v === 'string' ? english.push(v) : Object.values(v).forEach(flat)
const en = JSON.parse(readFileSync(catalogPath, 'utf8'))
flat(en)
const englishLeft = (page) => page.evaluate(({ english, keep }) => {
  const seen = new Set()
  const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
  for (let n = w.nextNode(); n; n = w.nextNode()) seen.add(n.textContent.trim())
  for (const el of document.querySelectorAll('[aria-label]')) seen.add(el.getAttribute('aria-label').trim())
  return english.filter((s) => s !== keep && seen.has(s))
}, { english, keep: en.app.name })
const shot = async (name) => { if (shots) await page.screenshot({ path: shots + '/' + name + '.png' }) }
const steps = [], consoleErrors = [], violations = []
let stored = []
// The scripts fetched before the sign-in page shows are the initial JavaScript.
const scripts = []
let signInShown = false
const browser = await chromium.launch({ executablePath, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] })
const fail = async (page, msg) => {
  const text = page ? await page.locator('body').innerText().catch(() => '') : ''
  console.error(msg + '\n--- page text ---\n' + text)
  await browser.close()
  process.exit(1)
}
const page = await browser.newPage({ locale: 'en-US' })
page.setDefaultTimeout(15000)
page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()) })
page.on('pageerror', (e) => consoleErrors.push('uncaught: ' + e.message))
page.on('request', (r) => {
  if (r.resourceType() === 'script' && !signInShown) scripts.push(new URL(r.url()).pathname)
})
await page.addInitScript(() => {
  document.addEventListener('securitypolicyviolation', (e) => {
    console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI)
  })
})
try {
  await page.goto(url + '/')
  await page.getByRole('heading', { name: 'Sign in to AgentCraft' }).waitFor()
  signInShown = true
  steps.push('redirected to sign-in at ' + new URL(page.url()).pathname)
  await shot('signin-light-en')
  // A wrong password shows the server's message.
  await page.getByRole('textbox', { name: 'Email' }).fill(email)
  await page.getByLabel('Password').fill('wrong password')
  await page.getByRole('button', { name: 'Sign in' }).click()
  const alert = await page.getByRole('alert').innerText()
  steps.push('wrong password: ' + alert)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Chat' }).waitFor()
  steps.push('signed in, at ' + new URL(page.url()).pathname)
  const agent = page.getByRole('combobox', { name: 'Agent' })
  await agent.waitFor()
  steps.push('agent chosen: ' + await agent.inputValue())
  await page.getByRole('textbox', { name: 'Message' }).fill('What is six times seven?')
  await page.getByRole('button', { name: 'Send' }).click()
  const assistant = page.getByRole('article', { name: 'Assistant' })
  await assistant.filter({ hasText: answer }).waitFor()
  const assistantText = await assistant.innerText()
  steps.push('assistant answered: ' + assistantText.replace(/\s+/g, ' '))
  await page.getByRole('complementary', { name: 'Conversations' }).getByRole('button', { name: 'What is six times seven?' }).waitFor()
  steps.push('the conversation is listed')
  // A second message in the same thread: the first answer keeps its
  // folded tool call, and the server stores each turn once.
  await page.getByRole('textbox', { name: 'Message' }).fill('And plus one?')
  await page.getByRole('button', { name: 'Send' }).click()
  await assistant.filter({ hasText: secondAnswer }).waitFor()
  const firstAnswer = await assistant.filter({ hasText: answer }).innerText()
  if (!firstAnswer.includes('1 tool call')) throw new Error('the first answer lost its tool call: ' + firstAnswer)
  await page.getByRole('button', { name: 'Send' }).waitFor()
  stored = await page.evaluate(async () => {
    const list = await (await fetch('/api/conversations')).json()
    const c = await (await fetch('/api/conversations/' + list.data[0].id)).json()
    return c.messages.map((m) => m.role + ': ' + m.content)
  })
  steps.push('second answer streamed; stored thread: ' + stored.join(' | '))
  await shot('chat-light-en')
  // The theme toggle: dark, kept across a reload.
  await page.getByRole('button', { name: 'Switch to dark theme' }).click()
  await page.getByRole('button', { name: 'Switch to light theme' }).waitFor()
  steps.push('dark theme: ' + await page.evaluate(() => document.documentElement.className))
  await page.getByRole('combobox', { name: 'Language' }).selectOption('ja')
  const navJA = page.getByRole('navigation', { name: 'ページ' }).getByRole('link')
  await navJA.filter({ hasText: 'チャット' }).waitFor()
  const nav = (await navJA.innerText()).trim()
  steps.push('nav in Japanese: ' + nav)
  // The choice is kept: a reload speaks Japanese still.
  await page.reload()
  await page.getByRole('button', { name: 'サインアウト' }).waitFor()
  await page.getByRole('button', { name: 'ライトテーマに切り替え' }).waitFor()
  steps.push('after reload: still Japanese, still dark')
  await page.getByRole('complementary', { name: '会話' }).getByRole('button', { name: 'What is six times seven?' }).click()
  await page.getByRole('article', { name: 'アシスタント' }).filter({ hasText: answer }).waitFor()
  steps.push('the stored conversation reopens with its answer')
  await shot('chat-dark-ja')
  const leftJA = await englishLeft(page)
  if (leftJA.length) throw new Error('English left on the Japanese chat page: ' + leftJA.join(' | '))
  await page.getByRole('combobox', { name: '言語' }).selectOption('zh-TW')
  await page.getByRole('navigation', { name: '頁面' }).getByRole('link', { name: '對話' }).waitFor()
  const leftTW = await englishLeft(page)
  if (leftTW.length) throw new Error('English left on the Traditional Chinese chat page: ' + leftTW.join(' | '))
  await page.getByRole('button', { name: '登出' }).click()
  await page.getByRole('heading', { name: '登入 AgentCraft' }).waitFor()
  const leftSignIn = await englishLeft(page)
  if (leftSignIn.length) throw new Error('English left on the Traditional Chinese sign-in page: ' + leftSignIn.join(' | '))
  steps.push('繁體中文: chat and, after signing out, sign-in show no English catalogue text')
  // Signed out for real: the session no longer answers.
  const meAfter = await page.evaluate(async () => (await fetch('/api/me')).status)
  if (meAfter !== 401) throw new Error('GET /api/me after sign-out = ' + meAfter)
  steps.push('signed out: /api/me answers 401')
  for (const e of consoleErrors) if (e.startsWith('CSP violation')) violations.push(e)
  console.log(JSON.stringify({ steps, stored, assistant: assistantText, nav_ja: nav, initial_scripts: scripts,
    console: consoleErrors.filter((e) => !e.startsWith('CSP violation') && !/status of 401/.test(e)), csp_violations: violations }))
} catch (e) {
  await fail(page, String(e && e.stack || e) + '\nsteps: ' + steps.join(' | ') + '\nconsole: ' + consoleErrors.join(' | '))
}
await browser.close()
`
