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
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
)

// The fake model's streamed answer, after one calculator call, and its
// answer to the next message in the same thread.
const (
	answer       = "Six times seven is 42, as the calculator says."
	secondAnswer = "Forty-three."
)

func TestSignInChatAndLanguage(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	env := newStudio(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help.", MaxSteps: 3, Tools: []string{"calculator"}}},
		Memory:    true,
	})
	toolResult := servertest.ScriptToolCall(t, fake, llm.ToolCall{ID: "call_1", Name: "calculator", Arguments: `{"expression":"6*7"}`}, answer)
	fake.Push(llmtest.Turn{Text: secondAnswer})

	// AGENTCRAFT_STUDIO_SCREENSHOTS names a directory to keep screenshots
	// of the pages in (light/English, dark/Japanese) for a reader.
	res := env.browse(t, chatScript, map[string]string{"answer": answer, "secondAnswer": secondAnswer})
	var out struct {
		Assistant string   `json:"assistant"`
		NavJA     string   `json:"nav_ja"`
		Stored    []string `json:"stored"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	if !strings.Contains(out.Assistant, answer) || !strings.Contains(out.Assistant, "1 tool call") {
		t.Errorf("the assistant's message reads %q; want the fake's answer with its tool call folded beneath", out.Assistant)
	}
	wantStored := []string{"user: What is six times seven?", "assistant: " + answer, "user: And plus one?", "assistant: " + secondAnswer}
	if !slices.Equal(out.Stored, wantStored) {
		t.Errorf("the stored thread is %q; want each turn once: %q", out.Stored, wantStored)
	}
	if got := toolResult(); !strings.Contains(got, "42") {
		t.Errorf("the model was shown the calculator's result %q; want 42", got)
	}
	if out.NavJA != "チャット" {
		t.Errorf("after choosing 日本語 the nav's link reads %q; want チャット", out.NavJA)
	}
	// The budget is what the browser needed to show sign-in, gzipped.
	if len(res.Scripts) == 0 {
		t.Fatal("the browser fetched no script before the sign-in page showed")
	}
	var raw, gz int
	for _, p := range res.Scripts {
		b, err := os.ReadFile(filepath.Join("..", "..", "server", "studio", "dist", filepath.FromSlash(strings.TrimPrefix(p, "/"))))
		if err != nil {
			t.Fatalf("the browser fetched %s, which the build lacks: %v", p, err)
		}
		raw += len(b)
		gz += gzipSize(t, b)
	}
	t.Logf("initial JavaScript (%s): %.1f KB, %.1f KB gzip; budget 350 KB gzip", strings.Join(res.Scripts, ", "), float64(raw)/1024, float64(gz)/1024)
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

// chatScript signs in, chats and switches language, finding every element
// by role and accessible name.
const chatScript = `
const { answer, secondAnswer } = args
await page.goto(url + '/')
await page.getByRole('heading', { name: 'Sign in to AgentCraft' }).waitFor()
signInShown = true
step('redirected to sign-in at ' + new URL(page.url()).pathname)
await shot('signin-light-en')
// A wrong password shows the server's message.
await page.getByRole('textbox', { name: 'Email' }).fill(cfg.email)
await page.getByLabel('Password').fill('wrong password')
await page.getByRole('button', { name: 'Sign in' }).click()
step('wrong password: ' + await page.getByRole('alert').innerText())
await page.getByLabel('Password').fill(cfg.password)
await page.getByRole('button', { name: 'Sign in' }).click()
await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Chat' }).click()
step('signed in, at ' + new URL(page.url()).pathname)
const agent = page.getByRole('combobox', { name: 'Agent' })
await agent.waitFor()
step('agent chosen: ' + await agent.inputValue())
await page.getByRole('textbox', { name: 'Message' }).fill('What is six times seven?')
await page.getByRole('button', { name: 'Send' }).click()
const assistant = page.getByRole('article', { name: 'Assistant' })
await assistant.filter({ hasText: answer }).waitFor()
const assistantText = await assistant.innerText()
step('assistant answered: ' + assistantText.replace(/\s+/g, ' '))
await page.getByRole('complementary', { name: 'Conversations' }).getByRole('button', { name: 'What is six times seven?' }).waitFor()
step('the conversation is listed')
// A second message in the same thread: the first answer keeps its
// folded tool call, and the server stores each turn once.
await page.getByRole('textbox', { name: 'Message' }).fill('And plus one?')
await page.getByRole('button', { name: 'Send' }).click()
await assistant.filter({ hasText: secondAnswer }).waitFor()
const firstAnswer = await assistant.filter({ hasText: answer }).innerText()
if (!firstAnswer.includes('1 tool call')) throw new Error('the first answer lost its tool call: ' + firstAnswer)
await page.getByRole('button', { name: 'Send' }).waitFor()
const stored = await page.evaluate(async () => {
  const list = await (await fetch('/api/conversations')).json()
  const c = await (await fetch('/api/conversations/' + list.data[0].id)).json()
  return c.messages.map((m) => m.role + ': ' + m.content)
})
step('second answer streamed; stored thread: ' + stored.join(' | '))
await shot('chat-light-en')
// The theme toggle: dark, kept across a reload.
await page.getByRole('button', { name: 'Switch to dark theme' }).click()
await page.getByRole('button', { name: 'Switch to light theme' }).waitFor()
step('dark theme: ' + await page.evaluate(() => document.documentElement.className))
await page.getByRole('combobox', { name: 'Language' }).selectOption('ja')
const navJA = page.getByRole('navigation', { name: 'ページ' }).getByRole('link', { name: 'チャット' })
await navJA.waitFor()
const nav = (await navJA.innerText()).trim()
step('nav in Japanese: ' + nav)
// The choice is kept: a reload speaks Japanese still.
await page.reload()
await page.getByRole('button', { name: 'サインアウト' }).waitFor()
await page.getByRole('button', { name: 'ライトテーマに切り替え' }).waitFor()
step('after reload: still Japanese, still dark')
await page.getByRole('complementary', { name: '会話' }).getByRole('button', { name: 'What is six times seven?' }).click()
await page.getByRole('article', { name: 'アシスタント' }).filter({ hasText: answer }).waitFor()
step('the stored conversation reopens with its answer')
await shot('chat-dark-ja')
const leftJA = await englishLeft()
if (leftJA.length) throw new Error('English left on the Japanese chat page: ' + leftJA.join(' | '))
await page.getByRole('combobox', { name: '言語' }).selectOption('zh-TW')
await page.getByRole('navigation', { name: '頁面' }).getByRole('link', { name: '對話' }).waitFor()
const leftTW = await englishLeft()
if (leftTW.length) throw new Error('English left on the Traditional Chinese chat page: ' + leftTW.join(' | '))
await page.getByRole('button', { name: '登出' }).click()
await page.getByRole('heading', { name: '登入 AgentCraft' }).waitFor()
const leftSignIn = await englishLeft()
if (leftSignIn.length) throw new Error('English left on the Traditional Chinese sign-in page: ' + leftSignIn.join(' | '))
step('繁體中文: chat and, after signing out, sign-in show no English catalogue text')
// Signed out for real: the session no longer answers.
const meAfter = await page.evaluate(async () => (await fetch('/api/me')).status)
if (meAfter !== 401) throw new Error('GET /api/me after sign-out = ' + meAfter)
step('signed out: /api/me answers 401')
result = { stored, assistant: assistantText, nav_ja: nav }
`
