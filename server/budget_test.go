package server_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/budget"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/pricing"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// keyWithRole stores an API key of role in the workspace.
func keyWithRole(t *testing.T, st store.Store, workspaceID string, role store.Role) string {
	t.Helper()
	var b [24]byte
	_, _ = rand.Read(b[:])
	key := "ac_" + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(key))
	if _, err := st.APIKeys().Create(context.Background(), store.APIKey{WorkspaceID: workspaceID, Name: string(role), Prefix: key[:9], Hash: h[:], Role: role}); err != nil {
		t.Fatal(err)
	}
	return key
}

// costTurn is a scripted completion of 300 tokens, 100 of its 250 input
// tokens from the cache. At the test's price of fake/fake-model (2.00
// input, 0.50 cached, 8.00 output per million) it costs
// 150×2.00 + 100×0.50 + 50×8.00 per million = 0.00075.
var costTurn = llmtest.Turn{Text: "ok", Usage: llm.Usage{InputTokens: 250, CachedTokens: 100, OutputTokens: 50}}

const costTurnNanos = 750_000

func budgetEnv(t *testing.T) (*servertest.Env, *llmtest.Server, client) {
	t.Helper()
	fake := llmtest.NewOpenAI(t)
	prices, err := pricing.New(pricing.Defaults(), map[string]pricing.Price{
		"fake/fake-model": {Input: 2 * pricing.Unit, CachedInput: pricing.Unit / 2, Output: 8 * pricing.Unit},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	env := servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{fakeProvider(fake)},
		Agents:    []platform.AgentSpec{helper},
		Pricing:   prices,
		// The configuration's default: 1000 tokens a month.
		Budget: &budget.Options{Default: budget.Limits{Tokens: 1000}},
	})
	return env, fake, client{t: t, base: env.URL, key: env.Key}
}

type budgetStatus struct {
	Limits   budget.Limits
	Custom   bool
	Default  budget.Limits
	Month    string
	Since    time.Time
	ResetsAt time.Time `json:"resets_at"`
	Used     budget.Limits
	Currency string
}

// TestBudgetRefusesWarnsAndResets: a workspace past its monthly token
// budget is refused with 429 naming the budget and its reset on /v1 and
// /api/chat before any model is called; the 80 % warning is audited once;
// only an admin may change or reset the budget, and a reset lets requests
// through again; a cost budget refuses the same way.
func TestBudgetRefusesWarnsAndResets(t *testing.T) {
	t.Parallel()
	env, fake, c := budgetEnv(t)
	v1 := `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`
	chat := `{"agent":"helper","messages":[{"role":"user","content":"hi"}]}`
	// 300 tokens a request: 0, 300, 600 run without a warning; at 900
	// (90 %) the warning is sent and the request runs; at 1200 every
	// surface is refused.
	for i, call := range []struct{ path, body string }{
		{"/v1/chat/completions", v1}, {"/api/chat", chat}, {"/v1/chat/completions", v1}, {"/api/chat", chat},
	} {
		fake.Push(costTurn)
		c.json("POST", call.path, call.body, http.StatusOK, nil)
		if got := len(fake.Requests()); got != i+1 {
			t.Fatalf("after request %d the provider saw %d requests", i+1, got)
		}
	}
	nextMonth := time.Date(time.Now().UTC().Year(), time.Now().UTC().Month()+1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
	for _, call := range []struct{ path, body string }{{"/v1/chat/completions", v1}, {"/api/chat", chat}, {"/v1/chat/completions", v1}} {
		resp, body := c.do("POST", call.path, call.body)
		d := wantError(t, resp, body, http.StatusTooManyRequests, "budget_exceeded")
		for _, want := range []string{"monthly token budget of 1000 tokens", "1200 used", "resets at " + nextMonth, "POST /api/budget/reset"} {
			if !strings.Contains(d.Message, want) {
				t.Errorf("POST %s refused with %q; want it to say %q", call.path, d.Message, want)
			}
		}
		if d.Type != "insufficient_quota" || resp.Header.Get("Retry-After") == "" {
			t.Errorf("POST %s: type %q, Retry-After %q; want insufficient_quota and the seconds until the reset", call.path, d.Type, resp.Header.Get("Retry-After"))
		}
	}
	if got := len(fake.Requests()); got != 4 {
		t.Errorf("the provider saw %d requests; want 4 (refusals call no model)", got)
	}

	var st budgetStatus
	c.json("GET", "/api/budget", "", http.StatusOK, &st)
	if st.Limits.Tokens != 1000 || st.Custom || st.Used.Tokens != 1200 || st.Used.Cost != 4*costTurnNanos || st.Currency != "USD" || st.ResetsAt.Format(time.RFC3339) != nextMonth {
		t.Errorf("GET /api/budget = %+v; want the default 1000 tokens, 1200 and 0.003 used, resetting %s", st, nextMonth)
	}

	// Only an admin changes or resets it.
	member := client{t: t, base: env.URL, key: keyWithRole(t, env.Store, env.Workspace.ID, store.RoleMember)}
	for _, r := range []struct{ method, path, body string }{
		{"PUT", "/api/budget", `{"tokens":0}`}, {"POST", "/api/budget/reset", ""}, {"DELETE", "/api/budget", ""},
	} {
		resp, body := member.do(r.method, r.path, r.body)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("member %s %s = %d %s; want 403", r.method, r.path, resp.StatusCode, body)
		}
	}
	member.json("GET", "/api/budget", "", http.StatusOK, nil)
	resp, body := member.do("POST", "/api/chat", chat)
	wantError(t, resp, body, http.StatusTooManyRequests, "budget_exceeded")

	// The admin resets: the month counts afresh and requests run again.
	c.json("POST", "/api/budget/reset", "", http.StatusOK, &st)
	if st.Used.Tokens != 0 || st.Since.IsZero() || time.Since(st.Since) > time.Minute {
		t.Errorf("after reset = %+v; want nothing used since now", st)
	}
	fake.Push(costTurn)
	member.json("POST", "/api/chat", chat, http.StatusOK, nil)

	// A cost budget: 0.001 a month, no token limit. 0.00075 is spent:
	// the next request runs (75 %) and the one after is refused.
	// Each refusal names the field at fault, the money field's own
	// refusal of a negative amount included.
	for bad, param := range map[string]string{`{"tokens":-1}`: "tokens", `{"cost":-2}`: "cost", `{"tokens":5,"cost":-2}`: "cost",
		`{"cost":"x"}`: "cost", `{}`: "tokens", `{"tokns":1}`: "tokns"} {
		resp, body := c.do("PUT", "/api/budget", bad)
		if d := wantError(t, resp, body, http.StatusBadRequest, "invalid_request"); d.Param != param {
			t.Errorf("PUT /api/budget %s: param %v (%s); want %q", bad, d.Param, d.Message, param)
		}
	}
	c.json("PUT", "/api/budget", `{"tokens":0,"cost":0.001}`, http.StatusOK, &st)
	if !st.Custom || st.Limits != (budget.Limits{Cost: pricing.Unit / 1000}) || st.Used.Cost != costTurnNanos {
		t.Errorf("PUT /api/budget = %+v; want the workspace's own 0.001 with 0.00075 used", st)
	}
	fake.Push(costTurn)
	c.json("POST", "/v1/chat/completions", v1, http.StatusOK, nil)
	resp, body = c.do("POST", "/v1/chat/completions", v1)
	d := wantError(t, resp, body, http.StatusTooManyRequests, "budget_exceeded")
	if !strings.Contains(d.Message, "monthly cost budget of 0.001 USD (0.0015 USD spent") {
		t.Errorf("cost refusal = %q; want it to name the cost budget and what was spent", d.Message)
	}

	// Back to the default of 1000 tokens: 600 used since the reset.
	c.json("DELETE", "/api/budget", "", http.StatusOK, &st)
	if st.Custom || st.Limits.Tokens != 1000 || st.Used.Tokens != 600 {
		t.Errorf("DELETE /api/budget = %+v; want the default back, 600 tokens used", st)
	}

	env.Platform.Stop() // flush the usage recorder and the audit log
	page, err := env.Store.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: env.Workspace.ID, Action: "budget.", Limit: store.MaxAuditLimit})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range page.Events {
		count[e.Action+" "+e.Target]++
		if e.Action == "budget.warning" && e.Target == "budget:tokens" {
			var det map[string]any
			_ = json.Unmarshal(e.Details, &det)
			if det["percent"] != float64(90) || det["limit"] != float64(1000) {
				t.Errorf("token warning details = %s; want 90 %% of 1000", e.Details)
			}
		}
	}
	want := map[string]int{"budget.warning budget:tokens": 1, "budget.warning budget:cost": 1,
		"budget.reset budget": 1, "budget.set budget": 1, "budget.default budget": 1}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("audit log has %d %q events; want %d (all: %v)", count[k], k, n, count)
		}
	}

	// Every usage row carries the exact cost of its tokens at the price.
	recs, err := env.Store.Usage().List(t.Context(), env.Workspace.ID, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 {
		t.Fatalf("%d usage rows; want the 6 requests that ran", len(recs))
	}
	for _, r := range recs {
		if r.Cost != costTurnNanos || r.Unpriced || r.CachedTokens != 100 {
			t.Errorf("usage row %+v: want cost 0.00075 (cached tokens at the cached price), priced", r)
		}
	}
}

// TestBudgetStopsARunUnderWay: a budget spent in the middle of a run stops
// it at its next model call, not a run later: each call of the run is
// checked with what the run has spent so far. With a 1000-token budget
// and 400 tokens a turn, an agent looping on a tool makes three calls
// (0, 400 and 800 spent before each) and is refused at the fourth; the
// run's usage row counts the three, and the next request is refused
// before any model call.
func TestBudgetStopsARunUnderWay(t *testing.T) {
	t.Parallel()
	_, fake, c := budgetEnv(t)
	loop := func(i int) llmtest.Turn {
		return llmtest.Turn{
			ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("call_", i), Name: "calculator", Arguments: `{"expression":"2+2"}`}},
			Usage:     llm.Usage{InputTokens: 350, OutputTokens: 50}}
	}
	fake.Push(loop(1), loop(2), loop(3), loop(4), llmtest.Turn{Text: "4", Usage: llm.Usage{InputTokens: 350, OutputTokens: 50}})
	for _, stream := range []bool{false, true} {
		body := fmt.Sprintf(`{"model":"helper","stream":%t,"messages":[{"role":"user","content":"add it up"}]}`, stream)
		resp, b := c.do("POST", "/v1/chat/completions", body)
		if !stream {
			d := wantError(t, resp, b, http.StatusTooManyRequests, "budget_exceeded")
			if !strings.Contains(d.Message, "monthly token budget of 1000 tokens (1200 used") {
				t.Errorf("the run was stopped with %q; want the budget named, 1200 used", d.Message)
			}
			if got := len(fake.Requests()); got != 3 {
				t.Fatalf("the provider saw %d calls; want 3, the run stopped at its fourth", got)
			}
			continue
		}
		// The next request, streamed or not, is refused before any call.
		if resp.StatusCode != http.StatusTooManyRequests || len(fake.Requests()) != 3 {
			t.Errorf("next request = %d %s after %d calls; want 429 and no call", resp.StatusCode, b, len(fake.Requests()))
		}
	}
	var st budgetStatus
	c.json("GET", "/api/budget", "", http.StatusOK, &st)
	if st.Used.Tokens != 1200 {
		t.Errorf("used %d tokens, want 1200 (the stopped run's three calls)", st.Used.Tokens)
	}
}

// TestCacheWritesPricedAtTheWritePrice: a turn of an Anthropic model that
// writes to the prompt cache is priced by the built-in table at 1.25×
// input for the written tokens, 0.1× for the read ones: the cost on its
// usage row, and what a cost budget counts.
func TestCacheWritesPricedAtTheWritePrice(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewAnthropic(t)
	off := false
	env := servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{{Name: "anthropic", Type: "anthropic", BaseURL: fake.URL, APIKey: "upstream-secret",
			Middleware: middleware.Settings{Retry: middleware.RetrySettings{Enabled: &off}}}},
		Agents: []platform.AgentSpec{{Name: "claude", Model: "anthropic/claude-sonnet-4-5-20250929", Instructions: "Help."}},
	})
	c := client{t: t, base: env.URL, key: env.Key}
	fake.Push(llmtest.Turn{Text: "ok", Usage: llm.Usage{InputTokens: 10_000, CachedTokens: 2_000, CacheWriteTokens: 3_000, OutputTokens: 100}})
	c.json("POST", "/v1/chat/completions", `{"model":"claude","messages":[{"role":"user","content":"hi"}]}`, http.StatusOK, nil)
	env.Platform.Stop() // flush the usage recorder

	var usage struct{ Data []store.UsageSummary }
	c.json("GET", "/api/usage", "", http.StatusOK, &usage)
	// 5000 × $3.00 + 2000 × $0.30 + 3000 × $3.75 + 100 × $15.00 per million.
	const want = pricing.Money(5000*3000 + 2000*300 + 3000*3750 + 100*15000)
	if len(usage.Data) != 1 || usage.Data[0].Cost != want || usage.Data[0].InputTokens != 10_000 || usage.Data[0].CachedTokens != 2_000 || usage.Data[0].Unpriced != 0 {
		t.Errorf("usage = %+v; want one priced row of 10000 input tokens (2000 read from the cache) costing %v", usage.Data, want)
	}
}
