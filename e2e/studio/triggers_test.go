package studio

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/trigger/triggertest"
)

// triggersFlow is the saved workflow the schedule runs.
const triggersFlow = `{"name":"daily-report","nodes":[{"id":"start","type":"start"},{"id":"end","type":"end"}],
"edges":[{"id":"e1","source":"start","target":"end"}]}`

// TestTriggersPage: the owner creates a weekday schedule of a workflow in
// Tokyo time (the page shows when it fires next, as the server computes
// it), sees the server's refusal of a bad cron spec beside the Schedule
// field, and creates a webhook of an agent, whose address and secret the
// page shows once; a delivery signed with that secret starts a run,
// which the Runs page lists with its trigger and filters by it. The
// schedule's fires list its ticks with their runs and errors; an edit,
// disabling, a new secret (the old one refused from then on) and a
// deletion each reach the server. A guest sees the triggers without a
// control that would 403.
func TestTriggersPage(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	env := newStudio(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents:    []platform.AgentSpec{{Name: "triage", Model: "fake/m", Instructions: "Sort the report."}},
		Workflows: true,
		Memory:    true, // the chat page, where signing in lands, lists conversations
	})
	ctx := t.Context()
	wf, err := env.Store.Workflows().Create(ctx, store.Workflow{WorkspaceID: env.Workspace.ID, Name: "daily-report", Definition: json.RawMessage(triggersFlow)})
	if err != nil {
		t.Fatal(err)
	}
	c := servertest.Client{T: t, Base: env.URL, Key: env.Key}
	type view struct {
		store.Trigger
		URL      string     `json:"url"`
		NextFire *time.Time `json:"next_fire"`
	}
	byName := func() map[string]view {
		t.Helper()
		var list struct{ Data []view }
		c.JSON(http.MethodGet, "/api/triggers", "", http.StatusOK, &list)
		m := map[string]view{}
		for _, v := range list.Data {
			m[v.Name] = v
		}
		return m
	}
	var serverError struct {
		Error struct{ Message, Param string }
	}
	resp, body := c.Do(http.MethodPost, "/api/triggers", `{"name":"probe","kind":"schedule","workflow":"daily-report","schedule":"every day at nine"}`)
	if err := json.Unmarshal(body, &serverError); err != nil || resp.StatusCode != http.StatusBadRequest || serverError.Error.Param != "schedule" {
		t.Fatalf("a bad cron spec = %d %s; want a 400 naming schedule", resp.StatusCode, body)
	}

	// 1. A schedule, a refused spec and a webhook, made in the browser.
	var made struct {
		Empty       bool   `json:"empty"`
		When        string `json:"when"`
		NextFire    string `json:"nextFire"`
		State       string `json:"state"`
		BadError    string `json:"badError"`
		BadInvalid  string `json:"badInvalid"`
		URL         string `json:"url"`
		Secret      string `json:"secret"`
		Recipe      string `json:"recipe"`
		SecretAfter int    `json:"secretAfter"`
	}
	browseInto(t, env, triggersJS+createTriggersScript, nil, &made)
	got := byName()
	sched, hook := got["morning-report"], got["github"]
	if !made.Empty {
		t.Error("with no triggers the page shows no empty state")
	}
	if sched.ID == "" || sched.Kind != store.TriggerSchedule || sched.WorkflowID != wf.ID || sched.Schedule != "0 9 * * 1-5" || sched.Timezone != "Asia/Tokyo" ||
		sched.Misfire != store.MisfireCatchUpOnce || string(sched.Input) != `{"team":"sales"}` || !sched.Enabled {
		t.Fatalf("the schedule the page made is %+v; want daily-report on weekdays at 09:00 Tokyo, catching up once, input {team: sales}", sched)
	}
	if made.When != "0 9 * * 1-5 (Asia/Tokyo)" || made.State != "Enabled" {
		t.Errorf("the schedule's row reads when %q, state %q", made.When, made.State)
	}
	if sched.NextFire == nil || made.NextFire != sched.NextFire.UTC().Format(time.RFC3339) {
		t.Errorf("the page says the schedule fires next at %q; the server says %v", made.NextFire, sched.NextFire)
	}
	if made.BadError != serverError.Error.Message || made.BadInvalid != "true" {
		t.Errorf("the Schedule field of a bad spec is described by %q (aria-invalid %q); want the server's %q", made.BadError, made.BadInvalid, serverError.Error.Message)
	}
	if _, ok := got["nightly"]; ok {
		t.Error("the refused schedule was stored")
	}
	if hook.ID == "" || hook.Kind != store.TriggerWebhook || hook.Agent != "triage" {
		t.Fatalf("the webhook the page made is %+v; want one of agent triage", hook)
	}
	if made.URL != env.URL+"/hooks/"+hook.ID || !strings.HasPrefix(made.Secret, "whsec_") {
		t.Fatalf("the page showed the webhook at %q with secret %q; want %s/hooks/%s and a whsec_ secret", made.URL, made.Secret, env.URL, hook.ID)
	}
	if !strings.Contains(made.Recipe, made.URL) || !strings.Contains(made.Recipe, made.Secret) || !strings.Contains(made.Recipe, "X-AgentCraft-Signature: sha256=") {
		t.Errorf("the signing recipe reads %q; want the address, the secret and the signature header", made.Recipe)
	}
	if made.SecretAfter != 0 {
		t.Errorf("after Done the secret is still on the page (%d times)", made.SecretAfter)
	}

	// 2. A delivery signed with what the page showed starts a run; a fire
	// of the schedule with a run and one without.
	deliver := func(secret, id string) (*http.Response, []byte) {
		t.Helper()
		payload := `{"report":"disk full on db-2"}`
		return servertest.Client{T: t}.DoWith(http.MethodPost, made.URL, payload, triggertest.Headers(secret, time.Now(), payload, id))
	}
	fake.Push(llmtest.Turn{Text: "Filed under infrastructure."})
	resp, body = deliver(made.Secret, "d-1")
	var delivered struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(body, &delivered); err != nil || resp.StatusCode != http.StatusAccepted || delivered.RunID == "" {
		t.Fatalf("a delivery signed with the page's secret = %d %s; want 202 with a run", resp.StatusCode, body)
	}
	waitFor(t, "the webhook's run to finish", func() bool {
		r, err := env.Store.Runs().Get(ctx, env.Workspace.ID, delivered.RunID)
		return err == nil && r.Status.Final()
	})
	ran, _ := env.Store.Runs().Get(ctx, env.Workspace.ID, delivered.RunID)
	if ran.Status != store.RunSucceeded || ran.TriggerID != hook.ID {
		t.Fatalf("the webhook's run is %s of trigger %q (%s); want succeeded, of %s", ran.Status, ran.TriggerID, ran.Error, hook.ID)
	}
	tick := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i, f := range []store.TriggerFire{
		{Tick: tick.Add(-24 * time.Hour), Owner: "worker-b", Error: `workflow "daily-report" was not found`},
		{Tick: tick, Owner: "worker-a", Missed: 2, RunID: delivered.RunID},
	} {
		f.WorkspaceID, f.TriggerID = env.Workspace.ID, sched.ID
		if _, won, err := env.Store.Triggers().Fire(ctx, f); err != nil || !won {
			t.Fatalf("seed fire %d: won %t, %v", i, won, err)
		}
		if err := env.Store.Triggers().FireDone(ctx, f); err != nil {
			t.Fatal(err)
		}
	}

	// 3. Runs, fires, an edit, disabling, a new secret and a deletion.
	var used struct {
		Rows         []string `json:"rows"`
		Filter       string   `json:"filter"`
		Fires        []string `json:"fires"`
		FireRun      string   `json:"fireRun"`
		DisabledNext string   `json:"disabledNext"`
		Rotated      string   `json:"rotated"`
		Dialog       string   `json:"dialog"`
		Left         []string `json:"left"`
	}
	browseInto(t, env, triggersJS+useTriggersScript, map[string]string{"hook": hook.ID, "run": delivered.RunID}, &used)
	if len(used.Rows) != 1 || !strings.Contains(used.Rows[0], delivered.RunID[:12]) || !strings.Contains(used.Rows[0], "github") {
		t.Errorf("the runs of github read %q; want its one run, named with its trigger", used.Rows)
	}
	if used.Filter != "github" {
		t.Errorf("the Trigger filter reads %q; want github", used.Filter)
	}
	if len(used.Fires) != 2 || !strings.Contains(used.Fires[0], "Stands for 2 missed ticks") || !strings.Contains(used.Fires[0], "worker-a") ||
		!strings.Contains(used.Fires[1], `No run: workflow "daily-report" was not found`) {
		t.Errorf("the schedule's fires read %q; want the newest with its run and 2 missed ticks, then the one that failed", used.Fires)
	}
	if used.FireRun != "/runs/"+delivered.RunID {
		t.Errorf("the fire's run links to %q", used.FireRun)
	}
	if used.DisabledNext != "—" {
		t.Errorf("a disabled schedule's next fire reads %q; want —", used.DisabledNext)
	}
	if !strings.Contains(used.Dialog, "stops working at once") {
		t.Errorf("the new-secret dialog reads %q; want it to say the old secret stops at once", used.Dialog)
	}
	if !strings.HasPrefix(used.Rotated, "whsec_") || used.Rotated == made.Secret {
		t.Errorf("the new secret shown is %q; want a new whsec_ secret", used.Rotated)
	}
	if len(used.Left) != 1 || used.Left[0] != "github" {
		t.Errorf("after the deletion the page lists %q; want github alone", used.Left)
	}
	got = byName()
	if _, ok := got["morning-report"]; ok {
		t.Error("the deleted schedule is still stored")
	}
	hook = got["github"]
	if hook.Enabled || hook.Agent != "" || hook.WorkflowID != wf.ID {
		t.Errorf("after the edit and Disable the webhook is %+v; want disabled, of workflow daily-report", hook)
	}
	// The old secret is refused, the new one is not; disabled, the
	// webhook answers as an unknown one.
	c.JSON(http.MethodPatch, "/api/triggers/"+hook.ID, `{"enabled":true}`, http.StatusOK, nil)
	if resp, body = deliver(made.Secret, "d-2"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a delivery signed with the replaced secret = %d %s; want 401", resp.StatusCode, body)
	}
	if resp, body = deliver(used.Rotated, "d-3"); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a delivery signed with the new secret = %d %s; want 202", resp.StatusCode, body)
	}

	// 4. A guest reads the list, with no control that would 403.
	guest, err := env.Identity.CreateUser(ctx, identity.NewUser{Email: guestEmail, Password: guestPassword})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Identity.AddMember(ctx, identity.CLI, env.Workspace.ID, guest.ID, identity.RoleGuest); err != nil {
		t.Fatal(err)
	}
	var seen struct {
		Rows     []string `json:"rows"`
		Controls []string `json:"controls"`
	}
	browseInto(t, env, triggersJS+guestTriggersScript, map[string]string{"email": guestEmail, "password": guestPassword}, &seen)
	if len(seen.Rows) != 1 || !strings.Contains(seen.Rows[0], "github") {
		t.Errorf("the guest sees the rows %q; want github", seen.Rows)
	}
	if len(seen.Controls) != 0 {
		t.Errorf("the guest is offered %q; want no control that writes", seen.Controls)
	}
}

// triggersJS has what the trigger scripts share: the Triggers page, its
// table and a row by the trigger's name.
const triggersJS = `
const main = page.getByRole('main')
const openTriggers = async () => {
  await page.getByRole('navigation', { name: 'Pages', exact: true }).getByRole('link', { name: 'Triggers' }).click()
  await page.getByRole('heading', { level: 1, name: 'Triggers' }).waitFor()
}
const table = () => main.getByRole('table', { name: 'Triggers of this workspace' })
// notice waits for the page's notice of a change (shown, and announced by its status region).
const notice = (text) => main.getByRole('status').filter({ hasText: text }).waitFor()
const row = (name) => table().getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) })
const rowNames = async () => (await table().getByRole('row').all()).length > 1
  ? await table().locator('tbody tr td:first-child').allInnerTexts() : []
`

// createTriggersScript makes the schedule, tries a bad spec and makes the
// webhook, reading what the page shows of each.
const createTriggersScript = `
await signIn()
await openTriggers()
// The list loads after the heading: wait for its empty state (isVisible does not wait).
const empty = await main.getByText('No triggers yet.').waitFor().then(() => true, () => false)
step('a schedule of daily-report')
await main.getByRole('button', { name: 'New trigger' }).click()
const form = main.getByRole('form', { name: 'New trigger' })
await form.getByRole('textbox', { name: 'Name' }).fill('morning-report')
await form.getByRole('radio', { name: 'Schedule' }).check()
await form.getByRole('combobox', { name: 'Runs' }).selectOption('workflow')
await form.getByRole('combobox', { name: 'Workflow' }).selectOption({ label: 'daily-report' })
await form.getByRole('textbox', { name: 'Schedule (cron)' }).fill('0 9 * * 1-5')
await form.getByRole('combobox', { name: 'Time zone' }).fill('Asia/Tokyo')
await form.getByRole('combobox', { name: 'Missed ticks' }).selectOption('catch_up_once')
await form.getByRole('textbox', { name: 'Input (JSON)' }).fill('{"team": "sales"}')
await form.getByRole('button', { name: 'Create trigger' }).click()
await notice('Trigger morning-report created.')
const r = row('morning-report')
const when = (await r.getByRole('cell').nth(3).innerText()).trim()
const nextFire = await r.locator('time').getAttribute('datetime')
const state = (await r.getByRole('cell').nth(5).innerText()).trim()
await shot('triggers-schedule')

step('a schedule the server refuses')
await main.getByRole('button', { name: 'New trigger' }).click()
await form.getByRole('textbox', { name: 'Name' }).fill('nightly')
await form.getByRole('textbox', { name: 'Schedule (cron)' }).fill('every day at nine')
expectStatus(400)
await form.getByRole('button', { name: 'Create trigger' }).click()
const cron = form.getByRole('textbox', { name: 'Schedule (cron)' })
await page.waitForFunction(() => document.querySelector('[aria-invalid=true]'))
const badError = await page.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby')).innerText, await cron.elementHandle())
const badInvalid = await cron.getAttribute('aria-invalid')
await form.getByRole('button', { name: 'Cancel' }).click()

step('a webhook of agent triage')
await main.getByRole('button', { name: 'New trigger' }).click()
await form.getByRole('textbox', { name: 'Name' }).fill('github')
await form.getByRole('radio', { name: 'Webhook' }).check()
await form.getByRole('combobox', { name: 'Runs' }).selectOption('agent')
await form.getByRole('combobox', { name: 'Agent' }).selectOption('triage')
await form.getByRole('button', { name: 'Create trigger' }).click()
const secretRegion = main.getByRole('region', { name: 'Webhook github: address and secret' })
await secretRegion.waitFor()
const urlShown = await secretRegion.getByRole('textbox', { name: 'Webhook address' }).inputValue()
const secret = await secretRegion.getByRole('textbox', { name: 'Signing secret' }).inputValue()
const recipe = await secretRegion.getByLabel('How to send a signed delivery').innerText()
await shot('triggers-webhook-secret')
await secretRegion.getByRole('button', { name: 'Done', exact: true }).click()
await secretRegion.waitFor({ state: 'detached' })
const secretAfter = await page.getByText(secret).count()
result = { empty, when, nextFire: new Date(nextFire).toISOString().replace('.000Z', 'Z'), state, badError, badInvalid, url: urlShown, secret, recipe, secretAfter }
`

// useTriggersScript reads the webhook's runs and the schedule's fires,
// then edits, disables, rotates and deletes.
const useTriggersScript = `
await signIn()
await openTriggers()
step('the runs of github')
await row('github').getByRole('link', { name: 'Runs of github' }).click()
const runs = main.getByRole('table', { name: 'Runs, newest first' })
// The page names a run's trigger once the triggers have loaded too (the
// runs may come first, with the trigger's id).
await runs.getByRole('row').filter({ hasText: 'github' }).waitFor()
const rows = await runs.locator('tbody tr').allInnerTexts()
const sel = main.getByRole('combobox', { name: 'Trigger' })
const filter = await sel.evaluate((el) => el.options[el.selectedIndex].text)
await shot('runs-by-trigger')

step('the fires of morning-report')
await openTriggers()
await row('morning-report').getByRole('button', { name: 'Fires of morning-report' }).click()
const fireTable = main.getByRole('table', { name: 'Ticks morning-report fired' })
await fireTable.locator('tbody tr').nth(1).waitFor()
const fires = (await fireTable.locator('tbody tr').allInnerTexts()).map((s) => s.replace(/\s+/g, ' '))
const fireRun = await fireTable.getByRole('link').first().getAttribute('href')
await shot('triggers-fires')

step('edit github to run daily-report')
await row('github').getByRole('button', { name: 'Edit github' }).click()
const form = main.getByRole('form', { name: 'Edit github' })
await form.getByRole('combobox', { name: 'Runs' }).selectOption('workflow')
await form.getByRole('combobox', { name: 'Workflow' }).selectOption({ label: 'daily-report' })
await form.getByRole('button', { name: 'Save changes' }).click()
await notice('Trigger github saved.')
await row('github').getByRole('cell', { name: 'Workflow daily-report' }).waitFor()

step('disable both')
await row('github').getByRole('button', { name: 'Disable github' }).click()
await row('github').getByRole('button', { name: 'Enable github' }).waitFor()
await row('morning-report').getByRole('button', { name: 'Disable morning-report' }).click()
await row('morning-report').getByRole('button', { name: 'Enable morning-report' }).waitFor()
const disabledNext = (await row('morning-report').getByRole('cell').nth(4).innerText()).trim()

step('a new secret for github')
await row('github').getByRole('button', { name: 'New secret for github' }).click()
const dialog = page.getByRole('dialog', { name: 'Replace the secret of github?' })
const dialogText = await dialog.innerText()
await dialog.getByRole('button', { name: 'Replace secret' }).click()
const secretRegion = main.getByRole('region', { name: 'Webhook github: address and secret' })
await secretRegion.waitFor()
const rotated = await secretRegion.getByRole('textbox', { name: 'Signing secret' }).inputValue()
await secretRegion.getByRole('button', { name: 'Done', exact: true }).click()

step('delete morning-report')
await row('morning-report').getByRole('button', { name: 'Delete morning-report' }).click()
const del = page.getByRole('dialog', { name: 'Delete trigger morning-report?' })
await del.getByRole('button', { name: 'Delete trigger' }).click()
await notice('Trigger morning-report deleted.')
await row('morning-report').waitFor({ state: 'detached' })
result = { rows, filter, fires, fireRun, disabledNext, rotated, dialog: dialogText, left: await rowNames() }
`

// guestTriggersScript signs in as the guest and lists the triggers and the
// controls offered.
const guestTriggersScript = `
await signIn(args.email, args.password)
await openTriggers()
await row('github').waitFor()
await page.waitForLoadState('networkidle')
const controls = []
for (const name of ['New trigger', 'Edit github', 'Disable github', 'Enable github', 'New secret for github', 'Delete github']) {
  if (await main.getByRole('button', { name }).count()) controls.push(name)
}
result = { rows: await rowNames(), controls }
`
