package studio

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"strings"
	"testing"
	"unicode"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// wordEmbedder is a bag-of-words embedder: each word hashed into one of
// 64 dimensions, normalized, so texts sharing words are near and vector
// search ranks like a crude keyword match.
type wordEmbedder struct{}

func (wordEmbedder) Dimension() int { return 64 }

func (wordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, 64)
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			h := fnv.New32a()
			_, _ = h.Write([]byte(w))
			v[h.Sum32()%64]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		if n == 0 {
			v[0], n = 1, 1
		}
		for k := range v {
			v[k] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}

// The two files the knowledge test ingests, one chosen in the file input
// and one dropped on the drop zone.
const (
	refundsMD   = "# Refunds\n\nRefunds are paid within 14 days of the return reaching our warehouse in Osaka.\n\n## Exceptions\n\nGift cards are never refunded."
	shippingTXT = "Shipping takes three to five working days. Every parcel ships with a tracking number, and refunds for lost parcels are paid at once."
)

func TestKnowledgePage(t *testing.T) {
	env := newStudio(t, &servertest.Options{Knowledge: true, Embedder: wordEmbedder{}, Memory: true})
	res := env.browse(t, knowledgeScript, map[string]string{"md": refundsMD, "txt": shippingTXT})
	var out struct {
		Sources map[string]string   `json:"sources"`
		Columns map[string][]string `json:"columns"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	// The page's chunk counts are the server's.
	k, err := env.Knowledge.Resolve(t.Context(), env.Workspace.ID, "handbook")
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := env.Knowledge.Sources(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 {
		t.Fatalf("the base holds %d sources, want refunds.md and shipping.txt: %+v", len(srcs), srcs)
	}
	for _, s := range srcs {
		row := out.Sources[s.Name]
		if s.Chunks == 0 || !strings.Contains(row, s.Name) || !strings.HasSuffix(strings.TrimSpace(row), " "+itoa(s.Chunks)) {
			t.Errorf("the sources table shows %q for %s; want its name and its %d chunks", row, s.Name, s.Chunks)
		}
	}
	for _, mode := range []string{"BM25 (full text)", "Vector", "Hybrid"} {
		hits := out.Columns[mode]
		if len(hits) == 0 || !strings.Contains(strings.Join(hits, "\n"), "Refunds are paid within 14 days") {
			t.Errorf("the %s column shows %q; want the refunds passage among its results", mode, hits)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// knowledgeScript creates a base, adds one file through the file input and
// one by dropping it, waits for both progress bars to reach 100, reads the
// sources table and runs the search tester in its three modes.
const knowledgeScript = `
const progressDone = async (name) => {
  const bar = page.getByRole('progressbar', { name: 'Progress of ' + name })
  for (let i = 0; i < 150; i++) {
    if (await bar.getAttribute('aria-valuenow') === '100') return
    await page.waitForTimeout(100)
  }
  throw new Error('the progress bar of ' + name + ' stays at ' + await bar.getAttribute('aria-valuenow'))
}
await signIn()
await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Knowledge' }).click()
await page.getByRole('heading', { level: 1, name: 'Knowledge' }).waitFor()
await page.getByRole('textbox', { name: 'Name' }).fill('handbook')
await page.getByRole('textbox', { name: 'Description' }).fill('Company policies')
await page.getByRole('button', { name: 'Create knowledge base' }).click()
const files = page.getByRole('region', { name: 'Add files to handbook' })
await files.waitFor()
step('base created')
await files.getByLabel('Choose files').setInputFiles({ name: 'refunds.md', mimeType: 'text/markdown', buffer: Buffer.from(args.md) })
await progressDone('refunds.md')
step('refunds.md chosen and ingested')
// Dropped: a drop event carrying the file, as the browser sends one.
const dt = await page.evaluateHandle((text) => {
  const d = new DataTransfer()
  d.items.add(new File([text], 'shipping.txt', { type: 'text/plain' }))
  return d
}, args.txt)
await files.getByText('Drop files here').dispatchEvent('drop', { dataTransfer: dt })
await progressDone('shipping.txt')
step('shipping.txt dropped and ingested')
const table = page.getByRole('table', { name: 'Sources of handbook' })
await table.getByRole('cell', { name: 'shipping.txt' }).waitFor()
const sources = {}
for (const row of await table.getByRole('row').all()) {
  const cells = await row.getByRole('cell').allInnerTexts()
  if (cells.length) sources[cells[0]] = cells.join(' ')
}
step('sources: ' + JSON.stringify(sources))
await page.getByRole('textbox', { name: 'Query' }).fill('refunds paid days')
await page.getByRole('button', { name: 'Search', exact: true }).click()
const columns = {}
for (const mode of ['BM25 (full text)', 'Vector', 'Hybrid']) {
  const col = page.getByRole('region', { name: mode })
  await col.getByRole('listitem').first().waitFor()
  columns[mode] = await col.getByRole('listitem').allInnerTexts()
}
step('search columns: ' + Object.entries(columns).map(([k, v]) => k + '=' + v.length).join(', '))
await page.getByRole('region', { name: 'Search tester' }).scrollIntoViewIfNeeded()
await shot('knowledge-light-en')
await page.getByRole('button', { name: 'Switch to dark theme' }).click()
await page.getByRole('button', { name: 'Switch to light theme' }).waitFor()
await shot('knowledge-dark-en')
await page.getByRole('button', { name: 'Switch to light theme' }).click()
await page.getByRole('combobox', { name: 'Language' }).selectOption('ja')
await page.getByRole('heading', { level: 1, name: 'ナレッジ' }).waitFor()
await page.getByRole('button', { name: '検索' , exact: true }).click()
await page.getByRole('region', { name: 'ハイブリッド' }).getByRole('listitem').first().waitFor()
await shot('knowledge-light-ja')
const left = await englishLeft()
if (left.length) throw new Error('English left on the Japanese knowledge page: ' + left.join(' | '))
await page.getByRole('combobox', { name: '言語' }).selectOption('en')
result = { sources, columns }
`

// The fake model's answer to the chat with an attachment.
const citedAnswer = "Refunds are paid within 14 days [1]."

func TestChatAttachmentCitation(t *testing.T) {
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: citedAnswer})
	env := newStudio(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help.", MaxSteps: 3}},
		Knowledge: true, Memory: true,
	})
	res := env.browse(t, attachScript, map[string]string{"md": refundsMD, "answer": citedAnswer})
	var out struct {
		Answer  string `json:"answer"`
		Passage string `json:"passage"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	if !strings.Contains(out.Answer, citedAnswer) || !strings.Contains(out.Answer, "[1] refunds.md") {
		t.Errorf("the answer reads %q; want the fake's answer with the citation [1] refunds.md", out.Answer)
	}
	if !strings.Contains(out.Passage, "Refunds are paid within 14 days of the return reaching our warehouse in Osaka.") {
		t.Errorf("the citation opened %q; want the passage of refunds.md", out.Passage)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the fake saw %d requests, want 1", len(reqs))
	}
	if body := string(reqs[0].Body); !strings.Contains(body, "warehouse in Osaka") || !strings.Contains(body, "[1] refunds.md") {
		t.Errorf("the model's request %s lacks the attached file's passage as source [1]", body)
	}
}

// attachScript attaches a file in the chat, sends a question, and opens
// the answer's citation.
const attachScript = `
await signIn()
await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Chat' }).click()
await page.getByRole('combobox', { name: 'Agent' }).waitFor()
await page.getByLabel('Attach file').setInputFiles({ name: 'refunds.md', mimeType: 'text/markdown', buffer: Buffer.from(args.md) })
await page.getByRole('list', { name: 'Attached files' }).getByRole('listitem').filter({ hasText: 'refunds.md' }).waitFor()
step('refunds.md attached')
await page.getByRole('textbox', { name: 'Message' }).fill('How fast are refunds paid?')
await page.getByRole('button', { name: 'Send' }).click()
const answer = page.getByRole('article', { name: 'Assistant' }).filter({ hasText: args.answer })
await answer.waitFor()
const cite = answer.getByRole('navigation', { name: 'Sources' }).getByRole('button', { name: '[1] refunds.md' })
await cite.waitFor()
step('answer shown with its citation')
const answerText = await answer.innerText()
await cite.focus()
await page.keyboard.press('Enter')
const dialog = page.getByRole('dialog', { name: '[1] refunds.md' })
await dialog.waitFor()
const passage = await dialog.innerText()
step('passage dialog opened by keyboard')
await shot('chat-attachment-light-en')
await page.keyboard.press('Escape')
await dialog.waitFor({ state: 'hidden' })
step('Escape closed the dialog')
result = { answer: answerText, passage }
`

// approvalFlow asks a person through a human node, then writes their
// answer into the output.
const approvalFlow = `{"name":"approval","nodes":[{"id":"start","type":"start"},
{"id":"ask","type":"human","config":{"prompt":"Approve the refund for {{input}}?","form_schema":{"type":"object","required":["approved"],
 "properties":{"approved":{"type":"boolean","title":"Approved"},"note":{"type":"string","title":"Note"}}}}},
{"id":"final","type":"code","config":{"mode":"template","template":"Decision: {{nodes.ask.output.approved}} ({{nodes.ask.output.note}})"}},
{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"ask"},{"id":"e2","source":"ask","target":"final"},{"id":"e3","source":"final","target":"end"}]}`

func TestChatWorkflowInterrupt(t *testing.T) {
	env := newStudio(t, &servertest.Options{Workflows: true, Memory: true})
	if _, err := env.Store.Workflows().Create(t.Context(), store.Workflow{WorkspaceID: env.Workspace.ID, Name: "approval", Definition: json.RawMessage(approvalFlow)}); err != nil {
		t.Fatal(err)
	}
	res := env.browse(t, workflowScript, nil)
	var out struct {
		Prompt string `json:"prompt"`
		Answer string `json:"answer"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	if !strings.Contains(out.Prompt, "Approve the refund for order 7?") {
		t.Errorf("the interrupt form reads %q; want the human node's prompt", out.Prompt)
	}
	if want := "Decision: true (ship it)"; !strings.Contains(out.Answer, want) {
		t.Errorf("the workflow's answer reads %q; want %q", out.Answer, want)
	}
	runs, err := env.Store.Runs().List(t.Context(), env.Workspace.ID, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != store.RunSucceeded {
		t.Errorf("runs %+v, want the one run, succeeded after the answer", runs)
	}
}

// workflowScript picks the workflow, sends the input, answers the human
// node's form inline and waits for the output.
const workflowScript = `
await signIn()
await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Chat' }).click()
await page.getByRole('radio', { name: 'Workflow' }).check()
await page.getByRole('combobox', { name: 'Workflow' }).selectOption('approval')
await page.getByRole('textbox', { name: 'Message' }).fill('order 7')
await page.getByRole('button', { name: 'Send' }).click()
const form = page.getByRole('form', { name: 'The workflow is waiting for you' })
await form.waitFor()
const prompt = await form.innerText()
step('interrupt shown: ' + prompt.split('\n').join(' | '))
await form.getByRole('checkbox', { name: 'Approved' }).check()
await form.getByRole('textbox', { name: 'Note' }).fill('ship it')
await shot('chat-workflow-light-en')
await form.getByRole('button', { name: 'Send answer' }).click()
const answer = page.getByRole('article', { name: 'Assistant' }).filter({ hasText: 'Decision:' })
await answer.waitFor()
await form.waitFor({ state: 'hidden' })
step('resumed; output shown')
result = { prompt, answer: await answer.innerText() }
`
