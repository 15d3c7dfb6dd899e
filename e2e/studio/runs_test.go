package studio

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// reviewFlow drafts with an agent, checks the draft against a contract,
// asks a person to approve it (a form), and polishes it with a second agent.
const reviewFlow = `{"name":"memo review","nodes":[
{"id":"start","type":"start"},
{"id":"draft","name":"Draft","type":"agent","config":{"model":"fake/m","prompt":"Draft a memo about {{input}}"}},
{"id":"check","name":"Check","type":"contract","config":{"schema":{"type":"string","minLength":1}}},
{"id":"review","name":"Review","type":"human","config":{"prompt":"Approve the draft: {{nodes.draft.output}}","form_schema":{"type":"object","required":["decision"],
  "properties":{"decision":{"type":"string","title":"Decision","enum":["approve","reject"]},"note":{"type":"string","title":"Note"}}}}},
{"id":"polish","name":"Polish","type":"agent","config":{"model":"fake/m","prompt":"Polish {{nodes.draft.output}} with the note {{input.note}}"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"check"},{"id":"e3","source":"check","target":"review"},
{"id":"e4","source":"review","target":"polish"},{"id":"e5","source":"polish","target":"end"}]}`

const (
	draftText   = "Budget memo: spend less on coffee."
	polishText  = "Polished budget memo."
	polishAgain = "Polished budget memo, second take."
)

// paced answers text in pieces over about d, so a node stays running
// long enough for the page to show it.
func paced(text string, d time.Duration, usage llm.Usage) llmtest.Turn {
	words := strings.SplitAfter(text, " ")
	return llmtest.Turn{Text: text, Chunks: words, Pace: d / time.Duration(len(words)), Usage: usage}
}

func TestRunsListAndRunView(t *testing.T) {
	fake := llmtest.NewOpenAI(t,
		paced(draftText, 3*time.Second, llm.Usage{InputTokens: 12, OutputTokens: 30}),
		paced(polishText, 2*time.Second, llm.Usage{InputTokens: 20, OutputTokens: 8}),
		paced(polishAgain, 2*time.Second, llm.Usage{InputTokens: 21, OutputTokens: 9}),
		llmtest.Turn{Text: draftText}, // the run that is canceled at the human node
	)
	env := newStudio(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Workflows: true,
		Memory:    true, // the chat page, shown after sign-in, lists conversations
	})
	c := servertest.Client{T: t, Base: env.URL, Key: env.Key}
	var wf store.Workflow
	c.JSON(http.MethodPost, "/api/workflows", reviewFlow, http.StatusCreated, &wf)

	res := env.browse(t, runsScript, map[string]string{"workflow": wf.ID, "draft": draftText, "polish": polishText, "polishAgain": polishAgain})
	var out struct {
		First, Rerun, Canceled string
		DraftSeen              []string `json:"draftSeen"`
		PolishSeen             []string `json:"polishSeen"`
		Rows                   map[string]int
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	// The page was open while the run ran: it showed each agent node
	// running before done, from the event stream, without a reload.
	for name, seen := range map[string][]string{"Draft": out.DraftSeen, "Polish": out.PolishSeen} {
		if len(seen) < 2 || seen[0] != "Running" || seen[len(seen)-1] != "Done" {
			t.Errorf("the page showed node %s as %q over time; want Running, then Done", name, seen)
		}
	}
	ctx := t.Context()
	first, err := env.Store.Runs().Get(ctx, env.Workspace.ID, out.First)
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != store.RunSucceeded || !strings.Contains(string(first.Output), polishText) {
		t.Errorf("the first run is %s with output %s; want succeeded with the polished memo", first.Status, first.Output)
	}
	// The answer the form sent is the human node's output.
	cps, err := env.Store.Runs().Checkpoints(ctx, env.Workspace.ID, out.First)
	if err != nil {
		t.Fatal(err)
	}
	var answer string
	for _, cp := range cps {
		if cp.NodeID == "review" {
			answer = string(cp.Output)
		}
	}
	if !strings.Contains(answer, `"decision":"approve"`) || !strings.Contains(answer, `"note":"fewer lattes"`) {
		t.Errorf("the review node's saved answer is %s; want the form's decision and note", answer)
	}
	rerun, err := env.Store.Runs().Get(ctx, env.Workspace.ID, out.Rerun)
	if err != nil {
		t.Fatal(err)
	}
	if rerun.ID == first.ID || rerun.Status != store.RunSucceeded || !strings.Contains(string(rerun.Output), polishAgain) {
		t.Errorf("the re-run %s is %s with output %s; want a new succeeded run with the second polish", rerun.ID, rerun.Status, rerun.Output)
	}
	canceled, err := env.Store.Runs().Get(ctx, env.Workspace.ID, out.Canceled)
	if err != nil {
		t.Fatal(err)
	}
	if canceled.Status != store.RunCanceled {
		t.Errorf("the run canceled from its page is %s", canceled.Status)
	}
	// Re-running from polish reused draft: the model drafted twice in
	// all (the first run and the canceled one), polished twice.
	if n := len(fake.Requests()); n != 4 {
		t.Errorf("the model was called %d times; want 4 (the re-run reuses the draft)", n)
	}
	want := map[string]int{"all": 3, "succeeded": 2, "canceled": 1, "waiting": 0, "workflow": 3}
	for k, v := range want {
		if out.Rows[k] != v {
			t.Errorf("the runs list shows %d rows for filter %s; want %d", out.Rows[k], k, v)
		}
	}
}

// runsScript starts a run from the page's session, watches it live,
// answers the human node's form, re-runs from polish, cancels a third
// run, and filters the list.
const runsScript = `
const { workflow, draft, polish, polishAgain } = args
page.on('response', (r) => { if (r.status() >= 500) step('server answered ' + r.status() + ' to ' + r.request().method() + ' ' + new URL(r.url()).pathname) })
await signIn()
const post = (path, body) => page.evaluate(async ({ path, body }) => {
  const r = await fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json',
    'X-Workspace': localStorage.getItem('agentcraft.workspace'), 'X-CSRF-Token': sessionStorage.getItem('agentcraft.csrf') }, body: JSON.stringify(body) })
  if (!r.ok) throw new Error(path + ': ' + r.status + ' ' + await r.text())
  return r.json()
}, { path, body })
const node = (name, kind) => page.getByRole('group', { name: name + ' (' + kind + ')' })
// watch records the status lines a node card shows, as they change (the
// card is looked up again on every change of the page).
const watch = async (name, kind) => {
  await node(name, kind).waitFor()
  await page.evaluate(({ key, label }) => {
    window.__seen = window.__seen || {}
    const seen = window.__seen[key] = []
    const statuses = ['Pending', 'Running', 'Done', 'Reused', 'Failed', 'Waiting for a person', 'Skipped']
    const look = () => {
      const el = document.querySelector('[role="group"][aria-label="' + label + '"]')
      if (!el) return
      const lines = [...el.querySelectorAll('div')].map((d) => d.textContent.trim())
      const s = statuses.find((x) => lines.includes(x)) ?? ''
      if (seen[seen.length - 1] !== s) seen.push(s)
    }
    look()
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true })
  }, { key: name, label: name + ' (' + kind + ')' })
}
const seen = (name) => page.evaluate((key) => window.__seen[key].filter((s) => s !== 'Pending'), name)

const run = await post('/api/workflows/' + workflow + '/runs', { input: 'the budget' })
step('started run ' + run.id + ' (' + run.status + ')')
await page.goto(url + '/runs/' + run.id)
await page.getByRole('heading', { level: 1, name: 'Run ' + run.id.slice(0, 12) }).waitFor()
await watch('Draft', 'Agent')
await node('Draft', 'Agent').filter({ hasText: 'Done' }).waitFor()
const draftSeen = await seen('Draft')
step('Draft was shown as: ' + draftSeen.join(' → '))
await node('Check', 'Contract').filter({ hasText: 'Done' }).waitFor()
await page.getByText('Contract: ok').waitFor()
step('the contract edge reads Contract: ok')
await node('Review', 'Human input').filter({ hasText: 'Waiting for a person' }).waitFor()
const form = page.getByRole('form', { name: 'Answer' })
await form.waitFor()
if (!(await form.innerText()).includes(draft)) throw new Error('the form lacks the prompt with the draft: ' + await form.innerText())
step('the run parks at Review with its form')
await watch('Polish', 'Agent')
await form.getByRole('combobox', { name: 'Decision' }).selectOption('approve')
await form.getByRole('textbox', { name: 'Note' }).fill('fewer lattes')
await form.getByRole('button', { name: 'Send and resume' }).click()
await node('Polish', 'Agent').filter({ hasText: 'Done' }).waitFor()
const polishSeen = await seen('Polish')
step('Polish was shown as: ' + polishSeen.join(' → '))
await page.getByRole('heading', { level: 1 }).locator('..').getByText('Succeeded').waitFor()
await node('Review', 'Human input').filter({ hasText: 'Done' }).waitFor()
// A clicked node shows its input, output and tokens.
await node('Draft', 'Agent').click()
const panel = page.getByRole('region', { name: 'Node Draft' })
await panel.getByLabel('Output').filter({ hasText: draft }).waitFor()
await panel.getByLabel('Input').filter({ hasText: 'the budget' }).waitFor()
await panel.getByText('12 in, 30 out').waitFor()
if (!(await node('Draft', 'Agent').innerText()).includes('42 tokens')) throw new Error('the Draft card lacks its tokens: ' + await node('Draft', 'Agent').innerText())
step('Draft: input, output and 42 tokens shown')
// Re-run from Polish: a new run, earlier nodes reused.
await node('Polish', 'Agent').click()
await page.getByRole('region', { name: 'Node Polish' }).getByRole('button', { name: 'Re-run from this node' }).click()
await page.waitForURL((u) => !u.pathname.endsWith(run.id))
const rerunID = new URL(page.url()).pathname.split('/').pop()
step('re-run ' + rerunID)
await node('Polish', 'Agent').filter({ hasText: 'Done' }).waitFor()
for (const [n, k] of [['Draft', 'Agent'], ['Check', 'Contract'], ['Review', 'Human input']]) await node(n, k).filter({ hasText: 'Reused' }).waitFor()
await page.getByRole('heading', { level: 1 }).locator('..').getByText('Succeeded').waitFor()
await node('Polish', 'Agent').click()
await page.getByRole('region', { name: 'Node Polish' }).getByLabel('Output').filter({ hasText: polishAgain }).waitFor()
step('re-run: Draft, Check, Review reused; Polish done with the second take')
await shot('run-light-en')
await page.getByRole('button', { name: 'Switch to dark theme' }).click()
await page.getByRole('button', { name: 'Switch to light theme' }).waitFor()
await shot('run-dark-en')
// A third run, canceled from its page while it waits.
const third = await post('/api/workflows/' + workflow + '/runs', { input: 'the offsite' })
await page.goto(url + '/runs/' + third.id)
await page.getByRole('form', { name: 'Answer' }).waitFor()
await page.getByRole('button', { name: 'Cancel run' }).click()
await page.getByRole('heading', { level: 1 }).locator('..').getByText('Canceled').waitFor()
step('third run canceled from its page')
// The list: all three, then filtered.
await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Runs' }).click()
const table = page.getByRole('table', { name: 'Runs, newest first' })
const rows = {}
// count waits (up to 10 s) for the table to show want rows and records
// how many it shows then.
const count = async (key, want) => {
  let n = -1
  for (const until = Date.now() + 10000; Date.now() < until; await page.waitForTimeout(100)) {
    n = await table.getByRole('link', { name: /^Open run / }).count()
    if (n === want) break
  }
  if (want === 0) await page.getByText('No runs match these filters.').waitFor()
  rows[key] = n
}
await count('all', 3)
for (const id of [run.id, rerunID, third.id]) await table.getByRole('link', { name: 'Open run ' + id }).waitFor()
await shot('runs-dark-en')
await page.getByRole('button', { name: 'Switch to light theme' }).click()
await shot('runs-light-en')
const status = page.getByRole('combobox', { name: 'Status' })
await status.selectOption('succeeded'); await count('succeeded', 2)
await status.selectOption('canceled'); await count('canceled', 1)
await table.getByRole('link', { name: 'Open run ' + third.id }).waitFor()
await status.selectOption('waiting'); await count('waiting', 0)
await status.selectOption('')
await page.getByRole('combobox', { name: 'Workflow' }).selectOption({ label: 'memo review' }); await count('workflow', 3)
step('filters: ' + JSON.stringify(rows))
// Japanese: the list and a run, with no English catalogue text left
// (node kind titles included: the catalogue translates them).
await page.getByRole('combobox', { name: 'Language' }).selectOption('ja')
await page.getByRole('table', { name: '実行の一覧（新しい順）' }).waitFor()
await shot('runs-light-ja')
let left = await englishLeft()
if (left.length) throw new Error('English left on the Japanese runs list: ' + left.join(' | '))
await page.goto(url + '/runs/' + rerunID)
await page.getByRole('group', { name: 'Polish（エージェント）' }).filter({ hasText: '完了' }).waitFor()
await page.getByRole('group', { name: 'Draft（エージェント）' }).filter({ hasText: '再利用' }).waitFor()
await shot('run-light-ja')
left = await englishLeft()
if (left.length) throw new Error('English left on the Japanese run view: ' + left.join(' | '))
step('日本語: list and run view translated')
result = { first: run.id, rerun: rerunID, canceled: third.id, draftSeen, polishSeen, rows }
`

// TestRunViewDrawsEveryEdge opens a run's view again and again, with the
// node kinds answered after the run at different delays: every load draws
// every edge, and the contract's edge its label. React Flow could leave
// the nodes without their handles' positions (with or without their size)
// when the view replaced them while they were measured (a CI run lost the
// label so); HandleRepair measures them again.
func TestRunViewDrawsEveryEdge(t *testing.T) {
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: draftText})
	env := newStudio(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)}, Workflows: true, Memory: true})
	c := servertest.Client{T: t, Base: env.URL, Key: env.Key}
	var wf store.Workflow
	c.JSON(http.MethodPost, "/api/workflows", reviewFlow, http.StatusCreated, &wf)
	var run store.Run
	c.JSON(http.MethodPost, "/api/workflows/"+wf.ID+"/runs", `{"input":"the budget"}`, http.StatusAccepted, &run)
	res := env.browse(t, everyEdgeScript, map[string]any{"run": run.ID, "edges": 5})
	var loads int
	if err := json.Unmarshal(res.Result, &loads); err != nil || loads < 20 {
		t.Fatalf("result %s (%v): want the number of loads checked, at least 20", res.Result, err)
	}
}

const everyEdgeScript = `
const { run, edges } = args
await signIn()
let loads = 0
for (let delay = 0; delay <= 200; delay += 10) {
  await page.unrouteAll()
  await page.route('**/api/node-kinds', async (route) => { await new Promise((r) => setTimeout(r, delay)); await route.continue() })
  await page.goto(url + '/runs/' + run)
  await page.getByRole('group', { name: 'Review (Human input)' }).filter({ hasText: 'Waiting for a person' }).waitFor()
  try {
    await page.waitForFunction((n) => document.querySelectorAll('.react-flow__edge').length === n, edges, { timeout: 3000 })
    await page.getByText('Contract: ok').waitFor({ timeout: 1000 })
  } catch {
    throw new Error('with the node kinds answered ' + delay + ' ms late, the run view drew ' +
      await page.locator('.react-flow__edge').count() + ' of ' + edges + ' edges and ' + await page.getByText('Contract: ok').count() + ' contract labels')
  }
  loads++
}
step(loads + ' loads drew every edge')
result = loads
`
