package studio

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/budget"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/pricing"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// budgetTurn is a completion of 298 tokens; at fakePrices it costs
// 251×2.00 + 47×8.00 per million = 0.000878.
var budgetTurn = llmtest.Turn{Text: "ok", Usage: llm.Usage{InputTokens: 251, OutputTokens: 47}}

// defaultTokens is the server's default monthly token budget in TestUsageBudget.
const defaultTokens = 1_000_000

// budgetMeter is one budget meter as the browser read it; nil when the
// page shows no meter (no limit).
type budgetMeter struct {
	Now  float64 `json:"now"`
	Max  float64 `json:"max"`
	Text string  `json:"text"`
}

// budgetView is the Monthly budget region as the browser read it.
type budgetView struct {
	Tokens *budgetMeter `json:"tokens"`
	Cost   *budgetMeter `json:"cost"`
	// Text is the region's whole text.
	Text string `json:"text"`
}

// TestUsageBudget: the Usage page shows the month's cost exactly and the
// workspace's budget; an admin sets a token limit below what was spent
// (the meter shows it spent and says new runs are refused with 429, as
// the API then refuses them), sees the server's refusal of a negative
// cost beside the Cost field, resets the month's count through the
// confirm dialog and goes back to the server's default, the server's
// state checked after each; a member sees the figures without controls.
func TestUsageBudget(t *testing.T) {
	fake := llmtest.NewOpenAI(t)
	env := newStudio(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help."}},
		Pricing:   fakePrices(t),
		Budget:    &budget.Options{Default: budget.Limits{Tokens: defaultTokens}},
		Memory:    true, // the chat page, where signing in lands, lists conversations
	})
	ctx := t.Context()
	addMember(t, env)
	c := servertest.Client{T: t, Base: env.URL, Key: env.Key}
	const v1 = `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`
	// Two requests through /v1, priced by the run seam as every surface's are.
	for range 2 {
		fake.Push(budgetTurn)
		c.JSON(http.MethodPost, "/v1/chat/completions", v1, http.StatusOK, nil)
	}
	turnCost := fakeCost(budgetTurn.Usage.InputTokens, budgetTurn.Usage.OutputTokens)
	spentTokens := int64(2 * (budgetTurn.Usage.InputTokens + budgetTurn.Usage.OutputTokens))
	waitFor(t, "both requests' usage records", func() bool {
		list, err := env.Store.Usage().List(ctx, env.Workspace.ID, time.Now().Add(-time.Hour), 0)
		return err == nil && len(list) == 2
	})
	getBudget := func() budget.Status {
		t.Helper()
		var st budget.Status
		c.JSON(http.MethodGet, "/api/budget", "", http.StatusOK, &st)
		return st
	}
	if st := getBudget(); st.Custom || st.Limits.Tokens != defaultTokens || st.Used.Tokens != spentTokens || st.Used.Cost != 2*turnCost {
		t.Fatalf("GET /api/budget = %+v before the browser; want the default %d tokens, %d and %s used", st, defaultTokens, spentTokens, 2*turnCost)
	}
	owner := ownerActor(t, env)
	// audited waits for the owner's change of the budget to be audited.
	audited := func(action string) {
		t.Helper()
		waitFor(t, action+" in the audit log", func() bool {
			page, err := env.Store.AuditLog().List(ctx, store.AuditFilter{WorkspaceID: env.Workspace.ID, Action: action, Actor: owner})
			return err == nil && len(page.Events) > 0
		})
	}

	// 1. The figures, then a token limit that is nearly spent, then one
	// below what was spent.
	var look struct {
		Cost            string     `json:"cost"`
		Before          budgetView `json:"before"`
		DefaultDisabled bool       `json:"defaultDisabled"`
		Nearly          budgetView `json:"nearly"`
		Spent           budgetView `json:"spent"`
	}
	browseInto(t, env, budgetJS+setLimitScript, map[string]any{"nearly": 700, "cost": "0.002", "spent": 500}, &look)
	if want := usd(2 * turnCost); look.Cost != want {
		t.Errorf("the week's cost reads %q; want %q, exact", look.Cost, want)
	}
	if m := look.Before.Tokens; m == nil || m.Now != float64(spentTokens) || m.Max != defaultTokens || !strings.Contains(m.Text, "(under 1%)") {
		t.Errorf("the token meter before any change reads %+v; want %d of %d, under 1%%", m, spentTokens, defaultTokens)
	}
	if look.Before.Cost != nil || !strings.Contains(look.Before.Text, "No cost limit") {
		t.Errorf("without a cost limit the region reads %q (meter %+v); want it to say No cost limit and show no meter", look.Before.Text, look.Before.Cost)
	}
	for _, want := range []string{"The server's default", "Resets", "Counted since", "596 of 1,000,000 tokens used this month"} {
		if !strings.Contains(look.Before.Text, want) {
			t.Errorf("the budget region reads %q; want it to say %q", look.Before.Text, want)
		}
	}
	if !look.DefaultDisabled {
		t.Error(`"Use the server default" can be pressed while the server's default applies`)
	}
	if m := look.Nearly.Tokens; m == nil || m.Max != 700 || !strings.Contains(look.Nearly.Text, "85%") || !strings.Contains(look.Nearly.Text, "Nearly spent") || strings.Contains(look.Nearly.Text, "refused with HTTP 429 until") {
		t.Errorf("at 85 %% of the limit the region reads %q (meter %+v); want 85%% and the warning, not the refusal", look.Nearly.Text, m)
	}
	if m := look.Nearly.Cost; m == nil || m.Now != 0.001756 || m.Max != 0.002 || m.Text != "$0.001756 of $0.002 used this month (87%)" {
		t.Errorf("with a cost limit of 0.002 the cost meter reads %+v; want $0.001756 of $0.002, 87%%", m)
	}
	if m := look.Spent.Tokens; m == nil || m.Now != 500 || m.Max != 500 || !strings.Contains(m.Text, "119%") {
		t.Errorf("past the limit the token meter reads %+v; want it full (500 of 500) saying 119%%", m)
	}
	if !strings.Contains(look.Spent.Text, "new runs are refused with HTTP 429 until the budget resets") || !strings.Contains(look.Spent.Text, "This workspace's own") {
		t.Errorf("past the limit the region reads %q; want it to say new runs are refused with 429 until the reset, and that the limits are the workspace's own", look.Spent.Text)
	}
	st := getBudget()
	if !st.Custom || st.Limits.Tokens != 500 || st.Limits.Cost != 2*pricing.Unit/1000 {
		t.Fatalf("after saving 500 tokens GET /api/budget = %+v; want the workspace's own 500 tokens and 0.002 (the cost limit kept)", st)
	}
	audited("budget.set")
	// What the page says, the API does: the next run is refused.
	resp, body := c.Do(http.MethodPost, "/v1/chat/completions", v1)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "budget_exceeded") {
		t.Fatalf("a run past the budget the page shows as spent = %d %s; want 429 budget_exceeded", resp.StatusCode, body)
	}

	// 2. A negative cost: the server's 400, by the Cost field.
	resp, body = c.Do(http.MethodPut, "/api/budget", `{"tokens": 500, "cost": "-1"}`)
	var refusal struct {
		Error struct{ Message, Param string }
	}
	if err := json.Unmarshal(body, &refusal); err != nil || resp.StatusCode != http.StatusBadRequest || refusal.Error.Param != "cost" {
		t.Fatalf("PUT /api/budget with a negative cost = %d %s; want a 400 naming cost", resp.StatusCode, body)
	}
	var negative struct {
		CostError    string `json:"costError"`
		CostInvalid  string `json:"costInvalid"`
		TokensError  string `json:"tokensError"`
		TokensHelp   string `json:"tokensHelp"`
		OtherAlerts  int    `json:"otherAlerts"`
		StatusAfter  string `json:"statusAfter"`
		RequestsSent int    `json:"requestsSent"`
	}
	browseInto(t, env, budgetJS+negativeCostScript, nil, &negative)
	if negative.CostError != refusal.Error.Message || negative.CostInvalid != "true" {
		t.Errorf("the Cost limit field is described by %q (aria-invalid %q); want the server's message %q", negative.CostError, negative.CostInvalid, refusal.Error.Message)
	}
	if negative.TokensHelp != "Input and output tokens per UTC month; empty or 0 for no limit." || negative.OtherAlerts != 0 {
		t.Errorf("the Token limit field reads %q and the region shows %d alerts; want only the Cost field to show the refusal", negative.TokensHelp, negative.OtherAlerts)
	}
	if negative.RequestsSent != 1 {
		t.Errorf("saving a negative cost sent %d PUTs; want 1 (the server judges it)", negative.RequestsSent)
	}
	if got := getBudget(); got.Limits != st.Limits || !got.Custom {
		t.Errorf("after the refused change GET /api/budget = %+v; want the limits unchanged (%+v)", got, st.Limits)
	}

	// 3. Reset through the confirm dialog: used goes to 0 and runs run again.
	var reset struct {
		Dialog string     `json:"dialog"`
		After  budgetView `json:"after"`
	}
	beforeReset := time.Now()
	browseInto(t, env, budgetJS+resetScript, nil, &reset)
	if !strings.Contains(reset.Dialog, "counted afresh from now") {
		t.Errorf("the reset dialog reads %q; want it to say what a reset does", reset.Dialog)
	}
	if m := reset.After.Tokens; m == nil || m.Now != 0 || m.Max != 500 || !strings.Contains(m.Text, "(0%)") || strings.Contains(reset.After.Text, "refused with HTTP 429 until") {
		t.Errorf("after the reset the token meter reads %+v and the region %q; want 0 of 500, 0%%, not refused", m, reset.After.Text)
	}
	st = getBudget()
	if st.Used.Tokens != 0 || st.Used.Cost != 0 || st.Since.Before(beforeReset.Add(-time.Second)) || st.Limits.Tokens != 500 {
		t.Fatalf("after the reset GET /api/budget = %+v; want nothing used since the reset, the 500-token limit kept", st)
	}
	audited("budget.reset")
	fake.Push(budgetTurn)
	c.JSON(http.MethodPost, "/v1/chat/completions", v1, http.StatusOK, nil)

	// 4. Back to the server's default.
	var restore struct {
		Status string     `json:"status"`
		After  budgetView `json:"after"`
	}
	browseInto(t, env, budgetJS+defaultScript, nil, &restore)
	if m := restore.After.Tokens; m == nil || m.Max != defaultTokens || restore.After.Cost != nil || !strings.Contains(restore.After.Text, "The server's default") {
		t.Errorf("after Use the server default the region reads %q (meter %+v); want the server's default of %d tokens and no cost limit", restore.After.Text, m, defaultTokens)
	}
	if st := getBudget(); st.Custom || st.Limits.Tokens != defaultTokens {
		t.Errorf("after Use the server default GET /api/budget = %+v; want the default", st)
	}
	audited("budget.default")

	// 5. A member reads the figures and has no control.
	var member struct {
		Controls []string   `json:"controls"`
		View     budgetView `json:"view"`
		Writes   []string   `json:"writes"`
	}
	browseInto(t, env, budgetJS+memberScript, map[string]string{"email": memberEmail, "password": memberPassword}, &member)
	if len(member.Controls) != 0 {
		t.Errorf("the member's budget region offers %q; want no control", member.Controls)
	}
	if member.View.Tokens == nil || !strings.Contains(member.View.Text, "Only workspace admins change the budget") {
		t.Errorf("the member's budget region reads %q (meter %+v); want the figures and a note that admins change them", member.View.Text, member.View.Tokens)
	}
	if len(member.Writes) != 0 {
		t.Errorf("the member's page wrote %q", member.Writes)
	}
}

// browseInto runs script and decodes its result into v.
func browseInto(t *testing.T, env *studioEnv, script string, args, v any) {
	t.Helper()
	res := env.browse(t, script, args)
	if err := json.Unmarshal(res.Result, v); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
}

// budgetJS has what the budget scripts share: opening the Usage page and
// reading its Monthly budget region.
const budgetJS = `
const region = () => page.getByRole('region', { name: 'Monthly budget' })
const openUsage = async () => {
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Usage' }).click()
  await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor()
  await region().getByRole('meter', { name: 'Token budget' }).waitFor()
}
const meter = async (name) => {
  const m = region().getByRole('meter', { name })
  if ((await m.count()) === 0) return null
  return { now: Number(await m.getAttribute('aria-valuenow')), max: Number(await m.getAttribute('aria-valuemax')), text: await m.getAttribute('aria-valuetext') }
}
const read = async () => ({ tokens: await meter('Token budget'), cost: await meter('Cost budget'), text: await region().innerText() })
const saved = async (text) => region().getByRole('status').filter({ hasText: text }).waitFor()
const save = async (tokens, cost) => {
  if (tokens !== undefined) await region().getByRole('spinbutton', { name: 'Token limit' }).fill(String(tokens))
  if (cost !== undefined) await region().getByRole('spinbutton', { name: 'Cost limit' }).fill(String(cost))
  await region().getByRole('button', { name: 'Save limits' }).click()
}
`

const setLimitScript = `
await signIn()
await openUsage()
const totals = page.getByRole('region', { name: 'Totals, Last 7 days' })
// The totals load apart from the budget: wait for them before reading.
await totals.getByRole('term').filter({ hasText: /^\s*Cost\s*$/ }).waitFor()
const terms = await totals.getByRole('term').allInnerTexts()
const defs = await totals.getByRole('definition').allInnerTexts()
const cost = defs[terms.findIndex((t) => t.trim() === 'Cost')].trim()
const before = await read()
const defaultDisabled = await region().getByRole('button', { name: 'Use the server default' }).isDisabled()
await save(args.nearly, args.cost)
await saved('Limits saved')
await region().getByRole('meter', { name: 'Token budget' }).and(page.locator('[aria-valuemax="' + args.nearly + '"]')).waitFor()
const nearly = await read()
await shot('usage-budget-nearly')
await save(args.spent)
await region().getByRole('meter', { name: 'Token budget' }).and(page.locator('[aria-valuemax="' + args.spent + '"]')).waitFor()
const spent = await read()
await region().scrollIntoViewIfNeeded()
await shot('usage-budget-spent')
step('cost ' + cost + '; tokens ' + JSON.stringify(before.tokens) + ' → ' + JSON.stringify(spent.tokens))
result = { cost, before, defaultDisabled, nearly, spent }
`

const negativeCostScript = `
await signIn()
await openUsage()
let requestsSent = 0
page.on('request', (r) => { if (r.method() === 'PUT' && new URL(r.url()).pathname === '/api/budget') requestsSent++ })
expectStatus(400)
await save(undefined, '-1')
const costField = region().getByRole('spinbutton', { name: 'Cost limit' })
await page.locator('[aria-invalid="true"]').and(costField).waitFor()
const describedBy = async (field) => field.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby') || '')?.textContent ?? '')
const costError = await describedBy(costField)
const costInvalid = await costField.getAttribute('aria-invalid')
const tokensField = region().getByRole('spinbutton', { name: 'Token limit' })
const tokensHelp = await describedBy(tokensField)
const otherAlerts = await region().getByRole('alert').count()
step('the Cost field says: ' + costError)
result = { costError, costInvalid, tokensHelp, otherAlerts, requestsSent }
`

const resetScript = `
await signIn()
await openUsage()
await region().getByRole('button', { name: "Reset this month's count" }).click()
const dialog = page.getByRole('dialog', { name: "Reset this month's count?" })
await dialog.waitFor()
const text = await dialog.innerText()
await shot('usage-budget-reset')
await dialog.getByRole('button', { name: 'Reset the count' }).click()
await saved("This month's count starts again from now.")
await dialog.waitFor({ state: 'hidden' })
const after = await read()
result = { dialog: text, after }
`

const defaultScript = `
await signIn()
await openUsage()
await region().getByRole('button', { name: 'Use the server default' }).click()
await saved("The server's default applies again.")
const after = await read()
result = { after }
`

const memberScript = `
const writes = []
page.on('request', (r) => { if (r.method() !== 'GET' && new URL(r.url()).pathname.startsWith('/api/budget')) writes.push(r.method() + ' ' + new URL(r.url()).pathname) })
await signIn(args.email, args.password)
await openUsage()
const controls = []
for (const role of ['button', 'spinbutton', 'textbox']) {
  for (const el of await region().getByRole(role).all()) controls.push(role + ' ' + ((await el.getAttribute('aria-label')) || (await el.innerText()).trim()))
}
const view = await read()
await shot('usage-budget-member')
result = { controls, view, writes }
`
