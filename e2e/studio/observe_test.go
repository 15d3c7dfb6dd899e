package studio

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/pricing"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// ownerActor is the signed-in owner as the audit log and usage records
// name them.
func ownerActor(t *testing.T, env *studioEnv) string {
	t.Helper()
	return identity.UserActorID(ownerID(t, env))
}

// waitFor polls cond (a store read: the audit and usage recorders write
// off the request path) for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// auditSeed is what TestAuditLogPage stores besides what it does through
// the API: 30 guard blocks two hours ago (rule-0 the newest), 25
// credential changes by the owner a day ago (provider:p0 the oldest, a
// minute apart from credBase) and 5 PII detections three days ago.
type auditSeed struct {
	credBase time.Time
}

func seedAudit(t *testing.T, env *studioEnv, owner string, now time.Time) auditSeed {
	t.Helper()
	var events []store.AuditEvent
	for i := range 30 {
		events = append(events, store.AuditEvent{WorkspaceID: env.Workspace.ID, Actor: "system", Action: "guard.block", Target: "agent:support",
			Details: json.RawMessage(fmt.Sprintf(`{"rule":"rule-%d"}`, i)), CreatedAt: now.Add(-2*time.Hour - time.Duration(i)*time.Minute)})
	}
	credBase := now.Add(-26 * time.Hour).Truncate(time.Minute)
	for i := range 25 {
		events = append(events, store.AuditEvent{WorkspaceID: env.Workspace.ID, Actor: owner, Action: "credential.put",
			Target: fmt.Sprintf("provider:p%d", i), CreatedAt: credBase.Add(time.Duration(i) * time.Minute)})
	}
	for i := range 5 {
		events = append(events, store.AuditEvent{WorkspaceID: env.Workspace.ID, Actor: "system", Action: "pii.detected",
			Details: json.RawMessage(`{"count":1}`), CreatedAt: now.Add(-72*time.Hour - time.Duration(i)*time.Minute)})
	}
	if err := env.Store.AuditLog().Append(t.Context(), events...); err != nil {
		t.Fatal(err)
	}
	return auditSeed{credBase: credBase}
}

// auditRow is one row of the audit table as the browser read it.
type auditRow struct {
	Actor, Action, Target, Details string
}

func TestAuditLogPage(t *testing.T) {
	env := newStudio(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(llmtest.NewOpenAI(t))}, Memory: true})
	ctx := t.Context()
	owner := ownerActor(t, env)
	now := time.Now()
	seed := seedAudit(t, env, owner, now)
	// Two real events: agents created through the API with the key.
	c := servertest.Client{T: t, Base: env.URL, Key: env.Key}
	for _, name := range []string{"writer", "editor"} {
		c.JSON(http.MethodPost, "/api/agents", `{"name":"`+name+`","model":"fake/m"}`, http.StatusCreated, nil)
	}
	waitFor(t, "two agent.create events", func() bool {
		p, err := env.Store.AuditLog().List(ctx, store.AuditFilter{WorkspaceID: env.Workspace.ID, Action: "agent.create"})
		return err == nil && len(p.Events) == 2
	})

	local := func(t time.Time) string { return t.Local().Format("2006-01-02T15:04") }
	res := env.browse(t, auditScript, map[string]string{
		"email": ownerEmail, "from": local(seed.credBase.Add(10 * time.Minute)), "before": local(seed.credBase.Add(20 * time.Minute)),
	})
	var out struct {
		First, Second, Back []auditRow
		SecondStatus        string `json:"secondStatus"`
		Guard1, Guard2      []auditRow
		Guard2NextDisabled  bool `json:"guard2NextDisabled"`
		GuardBack           []auditRow
		GuardURL            string `json:"guardURL"`
		Narrow              []auditRow
		Alert               string
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}

	// Unfiltered: 50 a page, newest first; the two API events are on the
	// first page with their target, the key as actor; Next and Previous
	// move between pages.
	if len(out.First) != 50 || len(out.Second) == 0 {
		t.Errorf("unfiltered pages hold %d and %d rows; want 50 and the rest", len(out.First), len(out.Second))
	}
	created := map[string]bool{}
	for _, r := range out.First {
		if r.Action == "agent.create" && strings.HasPrefix(r.Actor, "apikey:") {
			created[r.Target] = true
		}
	}
	if !created["agent:writer"] || !created["agent:editor"] {
		t.Errorf("the first page shows agent.create by a key for %v; want agent:writer and agent:editor", created)
	}
	if !strings.HasPrefix(out.SecondStatus, "Page 2: events 51–") {
		t.Errorf("the second page says %q; want Page 2: events 51–…", out.SecondStatus)
	}
	if diff := cmp.Diff(out.First, out.Back); diff != "" {
		t.Errorf("Previous did not return to the first page (-first +back):\n%s", diff)
	}

	// action=guard (the family), 25 a page: the store's listing, page by page.
	rules := func(rows []auditRow) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.Details)
		}
		return out
	}
	p1, err := env.Store.AuditLog().List(ctx, store.AuditFilter{WorkspaceID: env.Workspace.ID, Action: "guard.", Limit: 25})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := env.Store.AuditLog().List(ctx, store.AuditFilter{WorkspaceID: env.Workspace.ID, Action: "guard.", Limit: 25, Cursor: p1.Next})
	if err != nil {
		t.Fatal(err)
	}
	var want1, want2 []string
	for i, e := range append(p1.Events, p2.Events...) {
		var d struct{ Rule string }
		_ = json.Unmarshal(e.Details, &d)
		if d.Rule != fmt.Sprintf("rule-%d", i) {
			t.Fatalf("the store's guard event %d has rule %q; the seed is broken", i, d.Rule)
		}
		if i < 25 {
			want1 = append(want1, "rule: "+d.Rule)
		} else {
			want2 = append(want2, "rule: "+d.Rule)
		}
	}
	if diff := cmp.Diff(want1, rules(out.Guard1)); diff != "" {
		t.Errorf("action guard, page 1 (-store +page):\n%s", diff)
	}
	if diff := cmp.Diff(want2, rules(out.Guard2)); diff != "" {
		t.Errorf("action guard, page 2 (-store +page):\n%s", diff)
	}
	if !out.Guard2NextDisabled {
		t.Error("Next page stays enabled on the last page of guard events")
	}
	if diff := cmp.Diff(out.Guard1, out.GuardBack); diff != "" {
		t.Errorf("Previous did not return to the first guard page (-first +back):\n%s", diff)
	}
	for _, r := range append(out.Guard1, out.Guard2...) {
		if r.Action != "guard.block" || r.Actor != "system" || r.Target != "agent:support" {
			t.Errorf("action guard shows %+v", r)
			break
		}
	}
	if !strings.Contains(out.GuardURL, "action=guard") || !strings.Contains(out.GuardURL, "limit=25") {
		t.Errorf("the filtered page's URL is %s; want the filters in it (shareable)", out.GuardURL)
	}

	// The owner's e-mail as actor, action credential, 10 minutes of time:
	// exactly the store's events for that filter, named by e-mail.
	narrow, err := env.Store.AuditLog().List(ctx, store.AuditFilter{WorkspaceID: env.Workspace.ID, Actor: owner, Action: "credential.",
		Since: seed.credBase.Add(10 * time.Minute), Until: seed.credBase.Add(20 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	var wantNarrow []auditRow
	for _, e := range narrow.Events {
		wantNarrow = append(wantNarrow, auditRow{Actor: ownerEmail + "\n" + owner, Action: e.Action, Target: e.Target})
	}
	if len(wantNarrow) != 10 || wantNarrow[0].Target != "provider:p19" {
		t.Fatalf("the store holds %d events for the narrow filter, newest %+v; want p19 … p10", len(wantNarrow), wantNarrow)
	}
	if diff := cmp.Diff(wantNarrow, out.Narrow); diff != "" {
		t.Errorf("actor+action+time filter (-store +page):\n%s", diff)
	}
	if !strings.Contains(out.Alert, "until must be later than since") {
		t.Errorf("a time range ending before it starts shows %q; want the server's error", out.Alert)
	}
}

// auditScript pages through the audit log unfiltered, by the guard
// family 25 a page, and by actor, action and time; then asks for a time
// range that ends before it starts.
const auditScript = `
const table = () => page.getByRole('table', { name: 'Audit events, newest first' })
const rows = async () => {
  const out = []
  for (const r of await table().getByRole('row').all()) {
    const cells = await r.getByRole('cell').allInnerTexts()
    if (cells.length) out.push({ actor: cells[1].trim(), action: cells[2].trim(), target: cells[3].trim(), details: cells[4].trim() })
  }
  return out
}
// load does what changes the listing and waits for its answer to show.
const load = async (what) => {
  await Promise.all([page.waitForResponse((r) => new URL(r.url()).pathname === '/api/audit-logs'), what()])
  await page.locator('main [aria-busy="false"]').waitFor()
}
const pager = () => page.getByRole('navigation', { name: 'Audit log pages' })
await signIn()
await load(() => page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Audit log' }).click())
await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor()
await table().waitFor()
const first = await rows()
step('first page: ' + first.length + ' rows')
await load(() => pager().getByRole('button', { name: 'Next page' }).click())
const second = await rows()
const secondStatus = (await pager().locator('[aria-live]').innerText()).trim()
step('second page: ' + second.length + ' rows, ' + secondStatus)
await load(() => pager().getByRole('button', { name: 'Previous page' }).click())
const back = await rows()

const filters = page.getByRole('search', { name: 'Filter the audit log' })
await load(() => filters.getByRole('combobox', { name: 'Events per page' }).selectOption('25'))
await filters.getByRole('combobox', { name: 'Action' }).fill('guard')
await load(() => filters.getByRole('button', { name: 'Apply filters' }).click())
const guard1 = await rows()
const guardURL = page.url()
await load(() => pager().getByRole('button', { name: 'Next page' }).click())
const guard2 = await rows()
const guard2NextDisabled = await pager().getByRole('button', { name: 'Next page' }).isDisabled()
await load(() => pager().getByRole('button', { name: 'Previous page' }).click())
const guardBack = await rows()
step('guard: ' + guard1.length + ' + ' + guard2.length + ' rows')
await shot('audit-filtered')

await load(() => filters.getByRole('button', { name: 'Clear filters' }).click())
await filters.getByRole('combobox', { name: 'Actor' }).fill(args.email)
await filters.getByRole('combobox', { name: 'Action' }).fill('credential')
await filters.getByLabel('From').fill(args.from)
await filters.getByLabel('Before').fill(args.before)
await load(() => filters.getByRole('button', { name: 'Apply filters' }).click())
const narrow = await rows()
step('actor, action and time: ' + narrow.length + ' rows')

await filters.getByLabel('From').fill(args.before)
await filters.getByLabel('Before').fill(args.from)
await filters.getByRole('button', { name: 'Apply filters' }).click()
const alert = await page.getByRole('alert').innerText()
step('backwards range: ' + alert)
// The server's 400 is the point; chromium logs it.
const logged = consoleErrors.findIndex((e) => /status of 400/.test(e))
if (logged < 0) throw new Error('the backwards range was not refused by the server')
consoleErrors.splice(logged, 1)
result = { first, second, secondStatus, back, guard1, guard2, guard2NextDisabled, guardBack, guardURL, narrow, alert }
`

// fakePrices prices fake/m, the fake provider's model, at 2.00 input and
// 8.00 output per million tokens: 1000 in and 200 out cost 0.0036.
func fakePrices(t *testing.T) *pricing.Table {
	t.Helper()
	prices, err := pricing.New(nil, map[string]pricing.Price{"fake/m": {Input: 2 * pricing.Unit, Output: 8 * pricing.Unit}}, "")
	if err != nil {
		t.Fatal(err)
	}
	return prices
}

// fakeCost is what in and out tokens of fake/m cost at fakePrices.
func fakeCost(in, out int) pricing.Money {
	return (pricing.Money(in)*2*pricing.Unit + pricing.Money(out)*8*pricing.Unit) / 1_000_000
}

// usageSeed stores model requests of earlier days (in the store: the
// API cannot backdate one) and returns them: fake/m's priced as
// fakePrices does, and one of fake/m2, which has no price.
func seedUsage(t *testing.T, env *studioEnv, owner string, now time.Time) []store.UsageRecord {
	t.Helper()
	rec := func(ago time.Duration, agent, actor string, in, out int, status store.Status) store.UsageRecord {
		return store.UsageRecord{WorkspaceID: env.Workspace.ID, Agent: agent, Actor: actor, Provider: "fake", Model: "m",
			InputTokens: in, OutputTokens: out, LatencyMs: 300, Status: status, CreatedAt: now.Add(-ago), Cost: fakeCost(in, out)}
	}
	day := 24 * time.Hour
	unpriced := rec(3*day, "writer", owner, 2000, 400, store.StatusOK)
	unpriced.Model, unpriced.Cost, unpriced.Unpriced = "m2", 0, true
	seed := []store.UsageRecord{
		rec(5*time.Minute, "helper", owner, 1000, 200, store.StatusOK),
		rec(day, "helper", "apikey:nightly", 300, 50, store.StatusOK),
		rec(day+time.Hour, "writer", owner, 700, 100, store.StatusError),
		unpriced,
		rec(20*day, "helper", owner, 5000, 1000, store.StatusOK), // only in the last 30 days
	}
	if err := env.Store.Usage().Record(t.Context(), seed...); err != nil {
		t.Fatal(err)
	}
	return seed
}

// usageRow is one row of a usage table: its name (a day's datetime for
// the per-day table), its numbers, its cost as shown and the note on its
// requests without a price ("" for none).
type usageRow struct {
	Name                                   string
	Requests, Errors, Input, Output, Total int64
	Cost, Unpriced                         string
}

// usd is an amount below one dollar as the page shows it in en-US: every
// decimal of the exact amount, at least two ($0.0036, $0.00).
func usd(m pricing.Money) string { return "$" + m.String() }

// unpricedNote is a table cell's note on n requests without a price.
func unpricedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d without a price", n)
}

func TestUsagePage(t *testing.T) {
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "Hello!", Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}})
	env := newStudio(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help."}},
		Memory:    true,
		Pricing:   fakePrices(t),
	})
	ctx := t.Context()
	owner := ownerActor(t, env)
	now := time.Now()
	seed := seedUsage(t, env, owner, now)
	// One real request through /v1, recorded by the server itself.
	c := servertest.Client{T: t, Base: env.URL, Key: env.Key}
	c.JSON(http.MethodPost, "/v1/chat/completions", `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`, http.StatusOK, nil)
	var real store.UsageRecord
	waitFor(t, "the completion's usage record", func() bool {
		list, err := env.Store.Usage().List(ctx, env.Workspace.ID, now, 0)
		for _, r := range list {
			if r.Surface == "openai" {
				real = r
			}
		}
		return err == nil && real.ID != ""
	})
	if real.Agent != "helper" || real.InputTokens != 12 || real.OutputTokens != 3 || !strings.HasPrefix(real.Actor, "apikey:") || real.Cost != fakeCost(12, 3) {
		t.Fatalf("the completion was recorded as %+v; want helper, 12 in, 3 out, by the key, costing %s", real, fakeCost(12, 3))
	}
	all := append(slices.Clone(seed), real)

	res := env.browse(t, usageScript, nil)
	var out struct {
		Days7, Agents7, Users7, Days30 []usageRow
		DayChart                       string `json:"dayChart"`
		AgentChart                     string `json:"agentChart"`
		// Totals are the period's figures, term → definition.
		Totals map[string]string
		Hint   string
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}

	// want totals the records created since since per key.
	want := func(since time.Time, key func(store.UsageRecord) string) map[string]usageRow {
		m := map[string]usageRow{}
		costs, unpriced := map[string]pricing.Money{}, map[string]int{}
		for _, r := range all {
			if r.CreatedAt.Before(since) {
				continue
			}
			k := key(r)
			row := m[k]
			row.Name = k
			row.Requests++
			if r.Status == store.StatusError {
				row.Errors++
			}
			row.Input += int64(r.InputTokens)
			row.Output += int64(r.OutputTokens)
			row.Total += int64(r.InputTokens + r.OutputTokens)
			costs[k] += r.Cost
			if r.Unpriced {
				unpriced[k]++
			}
			m[k] = row
		}
		for k, row := range m {
			row.Cost, row.Unpriced = usd(costs[k]), unpricedNote(unpriced[k])
			m[k] = row
		}
		return m
	}
	byDay := func(r store.UsageRecord) string { return r.CreatedAt.UTC().Format(time.DateOnly) }
	checkDays := func(name string, got []usageRow, since time.Time) {
		t.Helper()
		w := want(since, byDay)
		// One row per UTC day from since's to today's, zeros included.
		days := int(now.UTC().Truncate(24*time.Hour).Sub(since.UTC().Truncate(24*time.Hour))/(24*time.Hour)) + 1
		if len(got) != days {
			t.Errorf("%s: %d rows, want one per day: %d", name, len(got), days)
		}
		for _, row := range got {
			wr, ok := w[row.Name]
			if !ok {
				wr = usageRow{Name: row.Name, Cost: usd(0)}
			}
			if row != wr {
				t.Errorf("%s: the row of %s reads %+v; want %+v", name, row.Name, row, wr)
			}
			delete(w, row.Name)
		}
		for _, wr := range w {
			t.Errorf("%s: no row for %s (%+v)", name, wr.Name, wr)
		}
	}
	week := now.Add(-7 * 24 * time.Hour)
	checkDays("tokens per day, 7 days", out.Days7, week)
	checkDays("tokens per day, 30 days", out.Days30, now.Add(-30*24*time.Hour))

	// Per agent, largest first; the same numbers the server totals.
	agents := want(week, func(r store.UsageRecord) string { return r.Agent })
	wantAgents := []usageRow{agents["writer"], agents["helper"]}
	if diff := cmp.Diff(wantAgents, out.Agents7); diff != "" {
		t.Errorf("tokens per agent, 7 days (-seeded +page):\n%s", diff)
	}
	stored, err := env.Store.Usage().SummaryBy(ctx, env.Workspace.ID, week, store.UsageByAgent)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stored {
		if a := agents[s.Key]; a.Total != s.InputTokens+s.OutputTokens || a.Requests != s.Requests {
			t.Errorf("the store totals agent %q as %+v; the page as %+v", s.Key, s, a)
		}
	}
	// Per user: the owner by e-mail, the keys as they are.
	users := want(week, func(r store.UsageRecord) string { return r.Actor })
	gotUsers := map[string]usageRow{}
	for _, u := range out.Users7 {
		gotUsers[u.Name] = u
	}
	wo := users[owner]
	wo.Name = ownerEmail
	if gotUsers[ownerEmail] != wo || gotUsers[real.Actor] != users[real.Actor] || len(out.Users7) != 3 {
		t.Errorf("tokens per user, 7 days: %+v; want %+v for the owner, %+v for the key and the nightly key", out.Users7, wo, users[real.Actor])
	}

	var in, outTok int64
	for _, r := range want(week, byDay) {
		in += r.Input
		outTok += r.Output
	}
	if wantLabel := "Tokens per day, Last 7 days: " + thousands(in) + " input and " + thousands(outTok) + " output tokens in all"; !strings.HasPrefix(out.DayChart, wantLabel) {
		t.Errorf("the day chart is named %q; want it to start %q", out.DayChart, wantLabel)
	}
	if !strings.HasPrefix(out.AgentChart, "Tokens per agent, Last 7 days, largest first: writer ") {
		t.Errorf("the agent chart is named %q; want its agents largest first", out.AgentChart)
	}

	// The week's cost, exact to the nano-dollar, and the request it
	// leaves out for want of a price, as the server totals them.
	var weekCost pricing.Money
	for _, r := range all {
		if !r.CreatedAt.Before(week) {
			weekCost += r.Cost
		}
	}
	sum, err := env.Store.Usage().Summary(ctx, env.Workspace.ID, week)
	if err != nil {
		t.Fatal(err)
	}
	var storedCost pricing.Money
	var storedUnpriced int64
	for _, s := range sum {
		storedCost += s.Cost
		storedUnpriced += s.Unpriced
	}
	if storedCost != weekCost || storedUnpriced != 1 {
		t.Fatalf("the store totals the week at %s with %d unpriced; the seed at %s with 1", storedCost, storedUnpriced, weekCost)
	}
	if want := usd(weekCost) + "\n1 request without a price"; out.Totals["Cost"] != want {
		t.Errorf("the week's cost reads %q; want %q", out.Totals["Cost"], want)
	}
	var weekRequests int64
	for _, r := range want(week, byDay) {
		weekRequests += r.Requests
	}
	if out.Totals["Requests"] != thousands(weekRequests) {
		t.Errorf("the week's requests read %q; want %d, beside the cost", out.Totals["Requests"], weekRequests)
	}
	if !strings.Contains(out.Hint, "pricing:") || !strings.Contains(out.Hint, "agentcraft.yaml") {
		t.Errorf("the page's hint on unpriced requests reads %q; want it to say prices are set under pricing: in agentcraft.yaml", out.Hint)
	}
}

// usageScript reads the Usage page's tables and chart names for the last
// 7 days, then the per-day table for the last 30.
const usageScript = `
const rowsOf = async (caption, dated) => {
  const t = page.getByRole('table', { name: caption })
  await t.waitFor()
  const out = []
  for (const r of await t.getByRole('row').all()) {
    const cells = await r.getByRole('cell').allInnerTexts()
    if (!cells.length) continue
    const head = r.getByRole('rowheader')
    const name = dated ? await head.locator('time').getAttribute('datetime') : (await head.innerText()).trim()
    const [requests, errors, input, output, total] = cells.slice(0, 5).map((c) => Number(c.replace(/[^0-9]/g, '')))
    const [cost, unpriced = ''] = cells[5].split('\n').map((s) => s.trim())
    out.push({ name, requests, errors, input, output, total, cost, unpriced })
  }
  return out
}
await signIn()
await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Usage' }).click()
await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor()
const days7 = await rowsOf('Tokens per day, Last 7 days', true)
const agents7 = await rowsOf('Tokens per agent, Last 7 days')
const users7 = await rowsOf('Tokens per user, Last 7 days')
const dayChart = await page.getByRole('region', { name: 'Tokens per day' }).getByRole('img').getAttribute('aria-label')
const agentChart = await page.getByRole('region', { name: 'Tokens per agent' }).getByRole('img').getAttribute('aria-label')
const totalsRegion = page.getByRole('region', { name: 'Totals, Last 7 days' })
const terms = await totalsRegion.getByRole('term').allInnerTexts()
const defs = await totalsRegion.getByRole('definition').allInnerTexts()
const totals = Object.fromEntries(terms.map((k, i) => [k.trim(), defs[i].trim()]))
const hint = await totalsRegion.getByRole('paragraph').innerText()
step('7 days: ' + days7.length + ' days, ' + agents7.length + ' agents, ' + users7.length + ' users')
await shot('usage-7d')
await page.getByRole('region', { name: 'Tokens per agent' }).scrollIntoViewIfNeeded()
await shot('usage-7d-agents')
await page.getByRole('combobox', { name: 'Period' }).selectOption({ label: 'Last 30 days' })
const days30 = await rowsOf('Tokens per day, Last 30 days', true)
step('30 days: ' + days30.length + ' days')
result = { days7, agents7, users7, dayChart, agentChart, days30, totals, hint }
`

// thousands writes n as en-US does: 12,345.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
