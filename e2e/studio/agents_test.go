package studio

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// storedAgent is the workspace's agent called name as the store holds
// it, with its middleware decoded; ok false when there is none.
func storedAgent(t *testing.T, env *studioEnv, name string) (a store.Agent, mw struct {
	middleware.Settings
	ToolProgress bool `json:"tool_progress"`
}, ok bool) {
	t.Helper()
	a, err := env.Store.Agents().GetByName(t.Context(), env.Workspace.ID, name)
	if err != nil {
		return a, mw, false
	}
	if len(a.Params.Middleware) > 0 {
		if err := json.Unmarshal(a.Params.Middleware, &mw); err != nil {
			t.Fatalf("agent %s middleware %s: %v", name, a.Params.Middleware, err)
		}
	}
	return a, mw, true
}

// TestAgentsPage creates an agent with two tools and PII masking through
// the form, sees the server's errors beside the fields they name, edits
// the agent and deletes it through the confirmation dialog, checking the
// store after each step.
func TestAgentsPage(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	env := newStudio(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)}, Memory: true})

	// Create, then two refused bodies.
	res := env.browse(t, agentsCreateScript, nil)
	var created struct {
		NameError, ModelError string
		Row                   string
	}
	if err := json.Unmarshal(res.Result, &created); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	a, mw, ok := storedAgent(t, env, "writer")
	if !ok {
		t.Fatal("after Create agent the store holds no agent writer")
	}
	if a.Model != "fake/m" || a.Instructions != "Write short answers." || a.Params.MaxSteps != 4 || !slices.Equal(a.Tools, []string{"calculator", "current_time"}) {
		t.Errorf("stored agent = model %q instructions %q max_steps %d tools %v; want fake/m, the instructions, 4, [calculator current_time]", a.Model, a.Instructions, a.Params.MaxSteps, a.Tools)
	}
	if mw.PII == nil || mw.PII.Mode != "redact" || !slices.Equal(mw.PII.Locales, []string{"JP"}) {
		t.Errorf("stored middleware %s; want pii mode redact for JP", a.Params.Middleware)
	}
	if !strings.Contains(created.Row, "writer") || !strings.Contains(created.Row, "calculator, current_time") {
		t.Errorf("the agents table shows %q for writer; want its name and tools", created.Row)
	}
	if !strings.Contains(created.NameError, "already exists") {
		t.Errorf("a second writer shows %q under Name; want the server's conflict message", created.NameError)
	}
	if !strings.Contains(created.ModelError, "PROVIDER/MODEL") {
		t.Errorf("model gpt-4o shows %q under Model; want the server's message about PROVIDER/MODEL", created.ModelError)
	}
	if n, err := env.Store.Agents().List(t.Context(), env.Workspace.ID); err != nil || len(n) != 1 {
		t.Errorf("the store holds %d agents (%v); the refused bodies must not have created any", len(n), err)
	}

	// Edit.
	env.browse(t, agentsEditScript, nil)
	a, mw, _ = storedAgent(t, env, "writer")
	if a.Instructions != "Write haiku." || a.Params.MaxSteps != 6 || !slices.Equal(a.Tools, []string{"current_time"}) {
		t.Errorf("edited agent = instructions %q max_steps %d tools %v; want Write haiku., 6, [current_time]", a.Instructions, a.Params.MaxSteps, a.Tools)
	}
	if mw.RateLimit.Enabled == nil || !*mw.RateLimit.Enabled || mw.RateLimit.RPS != 2 || !mw.ToolProgress {
		t.Errorf("edited middleware %s; want rate_limit enabled at 2 rps and tool_progress", a.Params.Middleware)
	}
	if mw.PII == nil || mw.PII.Mode != "redact" {
		t.Errorf("edited middleware %s lost the PII setting the edit did not touch", a.Params.Middleware)
	}

	// Delete: Cancel keeps it, Delete agent removes it.
	res = env.browse(t, agentsDeleteScript, nil)
	if _, _, ok := storedAgent(t, env, "writer"); ok {
		t.Error("after confirming the deletion the store still holds writer")
	}
	var deleted struct{ AfterCancel bool }
	if err := json.Unmarshal(res.Result, &deleted); err != nil || !deleted.AfterCancel {
		t.Errorf("result %s: the row should have stayed after Cancel", res.Result)
	}
}

const agentsOpen = `
await signIn()
await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Agents' }).click()
await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor()
const table = page.getByRole('table', { name: 'Agents of this workspace' })
// described is the text of the help/error line of a control.
const described = (loc) => loc.evaluate((el) => (el.getAttribute('aria-describedby') || '').split(' ').map((id) => document.getElementById(id)?.textContent ?? '').join(' '))
`

const agentsCreateScript = agentsOpen + `
await page.getByRole('button', { name: 'New agent' }).click()
const form = page.getByRole('form', { name: 'New agent' })
await form.getByRole('checkbox', { name: 'calculator' }).waitFor()
await form.getByRole('textbox', { name: 'Name', exact: true }).fill('writer')
await form.getByRole('combobox', { name: 'Model', exact: true }).fill('fake/m')
await form.getByRole('textbox', { name: 'Instructions' }).fill('Write short answers.')
await form.getByRole('spinbutton', { name: 'Max steps' }).fill('4')
await form.getByRole('checkbox', { name: 'calculator' }).check()
await form.getByRole('checkbox', { name: 'current_time' }).check()
await form.getByRole('checkbox', { name: 'Mask personal data before the model sees it' }).check()
await form.getByRole('combobox', { name: 'Mode', exact: true }).selectOption('redact')
await form.getByRole('checkbox', { name: 'Japan', exact: true }).check()
await shot('agents-form-light-en')
await form.getByRole('button', { name: 'Create agent' }).click()
const row = table.getByRole('row').filter({ hasText: 'writer' })
await row.waitFor()
step('writer created')
// The same name again: the server's 409 names the field.
expectStatus(409)
expectStatus(400)
await page.getByRole('button', { name: 'New agent' }).click()
await form.getByRole('checkbox', { name: 'calculator' }).waitFor()
const name = form.getByRole('textbox', { name: 'Name', exact: true })
await name.fill('writer')
await form.getByRole('combobox', { name: 'Model', exact: true }).fill('fake/m')
await form.getByRole('button', { name: 'Create agent' }).click()
await page.waitForFunction(() => document.querySelector('[aria-invalid=true]'))
const nameError = await described(name)
step('name error: ' + nameError)
// A model without its provider: the 400 names model.
await name.fill('poet')
const model = form.getByRole('combobox', { name: 'Model', exact: true })
await model.fill('gpt-4o')
await form.getByRole('button', { name: 'Create agent' }).click()
await page.waitForFunction(() => document.querySelector('input[list][aria-invalid=true]'))
const modelError = await described(model)
step('model error: ' + modelError)
await form.getByRole('button', { name: 'Cancel' }).click()
result = { NameError: nameError, ModelError: modelError, Row: (await row.innerText()).replace(/\s+/g, ' ') }
`

const agentsEditScript = agentsOpen + `
await page.getByRole('button', { name: 'Edit writer' }).click()
const form = page.getByRole('form', { name: 'Edit writer' })
await form.getByRole('checkbox', { name: 'calculator' }).waitFor()
if (await form.getByRole('textbox', { name: 'Name', exact: true }).inputValue() !== 'writer') throw new Error('the edit form does not hold the agent')
await form.getByRole('textbox', { name: 'Instructions' }).fill('Write haiku.')
await form.getByRole('spinbutton', { name: 'Max steps' }).fill('6')
await form.getByRole('checkbox', { name: 'calculator' }).uncheck()
await form.getByRole('checkbox', { name: /Limit this agent's requests/ }).check()
await form.getByRole('spinbutton', { name: 'Requests per second' }).fill('2')
await form.getByRole('checkbox', { name: "Show tool calls in the answer's stream" }).check()
await form.getByRole('button', { name: 'Save changes' }).click()
await page.getByText('Agent writer saved.').first().waitFor()
step('writer saved')
`

const agentsDeleteScript = agentsOpen + `
await page.getByRole('button', { name: 'Delete writer' }).click()
const dialog = page.getByRole('dialog', { name: 'Delete agent writer?' })
await dialog.waitFor()
await shot('agents-delete-light-en')
await dialog.getByRole('button', { name: 'Cancel' }).click()
await dialog.waitFor({ state: 'hidden' })
const afterCancel = await table.getByRole('row').filter({ hasText: 'writer' }).count() === 1
await page.getByRole('button', { name: 'Delete writer' }).click()
await dialog.getByRole('button', { name: 'Delete agent' }).click()
await dialog.waitFor({ state: 'hidden' })
await page.getByText('No agents yet.').first().waitFor()
step('writer deleted')
result = { AfterCancel: afterCancel }
`
