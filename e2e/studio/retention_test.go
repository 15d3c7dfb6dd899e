package studio

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// retentionRow is one row of the Data retention table as the browser read it.
type retentionRow struct {
	Kind      string `json:"kind"`
	Server    string `json:"server"`
	Workspace string `json:"workspace"`
	Effective string `json:"effective"`
	// Input is the workspace's age field's value; Editable says there is one.
	Input    string `json:"input"`
	Editable bool   `json:"editable"`
}

// TestRetentionSection: on Settings, an owner sees each kind of data with
// the server's policy and the age in effect (the operator's kinds without
// a field); sets the workspace's own ages for conversations and run
// events, which the server stores and audits; sees the server's refusal
// of a bad age beside the Uploads field with nothing stored; and empties
// a field to go back to the server's policy. A member sees a note and
// asks the server nothing about retention.
func TestRetentionSection(t *testing.T) {
	env := newStudio(t, &servertest.Options{
		Retention: map[string]string{"run_events": "30d", "audit": "400d"},
		Memory:    true, // the chat page, where signing in lands, lists conversations
	})
	addMember(t, env)
	c := servertest.Client{T: t, Base: env.URL, Key: env.Key}
	type policy struct {
		Server, Workspace, Effective map[string]string
	}
	get := func() policy {
		t.Helper()
		var p policy
		c.JSON(http.MethodGet, "/api/retention", "", http.StatusOK, &p)
		return p
	}
	resp, body := c.Do(http.MethodPut, "/api/retention", `{"uploads":"soon"}`)
	var refusal struct {
		Error struct{ Message, Param string }
	}
	if err := json.Unmarshal(body, &refusal); err != nil || resp.StatusCode != http.StatusBadRequest || refusal.Error.Param != "uploads" {
		t.Fatalf("PUT a bad age = %d %s; want a 400 naming uploads", resp.StatusCode, body)
	}

	var out struct {
		Before     []retentionRow `json:"before"`
		Saved      []retentionRow `json:"saved"`
		Status     string         `json:"status"`
		BadError   string         `json:"badError"`
		BadInvalid string         `json:"badInvalid"`
		Back       []retentionRow `json:"back"`
		Member     string         `json:"member"`
		Asked      []string       `json:"asked"`
	}
	browseInto(t, env, retentionScript, map[string]string{"email": memberEmail, "password": memberPassword}, &out)
	row := func(rows []retentionRow, kind string) retentionRow {
		for _, r := range rows {
			if r.Kind == kind {
				return r
			}
		}
		t.Fatalf("no row %q in %+v", kind, rows)
		return retentionRow{}
	}
	if len(out.Before) != 7 {
		t.Fatalf("the table lists %d kinds; want 7: %+v", len(out.Before), out.Before)
	}
	if r := row(out.Before, "Run events"); r.Server != "30d" || r.Effective != "30d" || !r.Editable || r.Input != "" {
		t.Errorf("before any change Run events reads %+v; want the server's 30d in effect, an empty field", r)
	}
	if r := row(out.Before, "Audit log"); r.Server != "400d" || r.Editable || r.Workspace != "Set by the operator" {
		t.Errorf("the Audit log row reads %+v; want the server's 400d, set by the operator, no field", r)
	}
	if r := row(out.Before, "Conversations"); r.Server != "Kept forever" || r.Effective != "Kept forever" {
		t.Errorf("without a policy Conversations reads %+v; want Kept forever", r)
	}
	if r := row(out.Saved, "Conversations"); r.Effective != "90d" || r.Input != "90d" {
		t.Errorf("after saving 90d Conversations reads %+v", r)
	}
	if r := row(out.Saved, "Run events"); r.Effective != "Kept forever" {
		t.Errorf("after saving keep Run events reads %+v; want Kept forever in effect", r)
	}
	if out.Status != "Retention saved." {
		t.Errorf("after saving the section says %q", out.Status)
	}
	if out.BadError != refusal.Error.Message || out.BadInvalid != "true" {
		t.Errorf("the Uploads field of a bad age is described by %q (aria-invalid %q); want the server's %q", out.BadError, out.BadInvalid, refusal.Error.Message)
	}
	if r := row(out.Back, "Run events"); r.Effective != "30d" || r.Input != "" {
		t.Errorf("after emptying its field Run events reads %+v; want the server's 30d again", r)
	}
	got := get()
	if len(got.Workspace) != 1 || got.Workspace["conversations"] != "90d" || got.Effective["run_events"] != "30d" || got.Effective["uploads"] != "keep" {
		t.Errorf("GET /api/retention after the browser = %+v; want only conversations 90d of the workspace's own, run events back to 30d, uploads kept", got)
	}
	if !strings.Contains(out.Member, "Only admins and owners") || len(out.Asked) != 0 {
		t.Errorf("a member's section reads %q and asked %v; want the note and no request", out.Member, out.Asked)
	}
	owner := ownerActor(t, env)
	waitFor(t, "retention.update in the audit log", func() bool {
		page, err := env.Store.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: env.Workspace.ID, Action: "retention.update", Actor: owner})
		return err == nil && len(page.Events) == 2
	})
}

const retentionScript = `
const main = page.getByRole('main')
const region = () => main.getByRole('region', { name: 'Data retention' })
const rows = async () => {
  const out = []
  for (const tr of await region().getByRole('table', { name: "Retention of this workspace's data" }).locator('tbody tr').all()) {
    const cells = tr.getByRole('cell')
    const field = cells.nth(1).getByRole('textbox')
    const editable = (await field.count()) > 0
    out.push({
      kind: (await tr.getByRole('rowheader').evaluate((th) => th.firstChild.textContent)).trim(),
      server: (await cells.nth(0).innerText()).trim(),
      workspace: editable ? '' : (await cells.nth(1).innerText()).trim(),
      effective: (await cells.nth(2).innerText()).trim(),
      input: editable ? await field.inputValue() : '',
      editable,
    })
  }
  return out
}
const field = (kind) => region().getByRole('textbox', { name: 'Keep ' + kind + ' for' })
const save = () => region().getByRole('button', { name: 'Save retention' }).click()
await signIn()
await page.goto(url + '/settings')
await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor()
await field('Run events').waitFor()
const before = await rows()
await region().scrollIntoViewIfNeeded()
await shot('settings-retention')

step('conversations 90d, run events keep')
await field('Conversations').fill('90d')
await field('Run events').fill('keep')
await save()
await region().getByRole('status').filter({ hasText: 'Retention saved.' }).waitFor()
const saved = await rows()
const status = (await region().getByRole('status').innerText()).trim()

step('a bad age for uploads')
await field('Uploads').fill('soon')
expectStatus(400)
await save()
await page.waitForFunction(() => document.querySelector('[aria-invalid=true]'))
const bad = field('Uploads')
const badError = await page.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby')).innerText, await bad.elementHandle())
const badInvalid = await bad.getAttribute('aria-invalid')
await field('Uploads').fill('')

step('run events back to the server policy')
await field('Run events').fill('')
await save()
await region().getByRole('status').filter({ hasText: 'Retention saved.' }).waitFor()
await page.waitForFunction(() => !document.querySelector('[aria-invalid=true]'))
const back = await rows()

step('the member')
await page.getByRole('button', { name: 'Sign out' }).click()
await page.getByRole('heading', { name: 'Sign in to AgentCraft' }).waitFor()
const asked = []
page.on('request', (r) => { if (new URL(r.url()).pathname === '/api/retention') asked.push(r.method()) })
await signIn(args.email, args.password)
await page.goto(url + '/settings')
await region().waitFor()
await page.waitForLoadState('networkidle')
const member = (await region().innerText()).trim()
result = { before, saved, status, badError, badInvalid, back, member, asked }
`
