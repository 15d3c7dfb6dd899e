package server_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/pricing"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// TestUsageCostGroups: completions on a provider named "openai" are priced
// by the built-in table (gpt-4o-mini, a dated gpt-4o id), cached input at
// the cached price; a model the table does not price costs 0 and counts as
// unpriced; GET /api/usage totals cost per day, agent, workflow, user, API
// key and model, and names the currency.
func TestUsageCostGroups(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t)
	openai := fakeProvider(fake)
	openai.Name = "openai" // the built-in prices are keyed openai/<model>
	local := fakeProvider(fake)
	env := servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{openai, local},
		Agents: []platform.AgentSpec{
			{Name: "mini", Model: "openai/gpt-4o-mini", Instructions: "Help."},
			{Name: "dated", Model: "openai/gpt-4o-2024-08-06", Instructions: "Help."},
			{Name: "local", Model: "fake/fake-model", Instructions: "Help."},
		},
	})
	c := client{t: t, base: env.URL, key: env.Key}
	ask := func(agent, user string, u llm.Usage) {
		t.Helper()
		fake.Push(llmtest.Turn{Text: "ok", Usage: u})
		c.json("POST", "/v1/chat/completions", `{"model":"`+agent+`","user":"`+user+`","messages":[{"role":"user","content":"hi"}]}`, http.StatusOK, nil)
	}
	// gpt-4o-mini (0.15 / 0.075 cached / 0.60): 1000 uncached + 1000 cached in, 500 out
	// = 150 000 + 75 000 + 300 000 nano.
	ask("mini", "ann", llm.Usage{InputTokens: 2000, CachedTokens: 1000, OutputTokens: 500})
	// gpt-4o (2.50 / 1.25 / 10.00) by its dated id: 400 uncached + 600 cached, 100 out
	// = 1 000 000 + 750 000 + 1 000 000 nano.
	ask("dated", "bob", llm.Usage{InputTokens: 1000, CachedTokens: 600, OutputTokens: 100})
	ask("local", "ann", llm.Usage{InputTokens: 10, OutputTokens: 10})
	env.Platform.Stop() // flush the usage recorder

	recs, err := env.Store.Usage().List(t.Context(), env.Workspace.ID, time.Time{}, 0)
	if err != nil || len(recs) != 3 {
		t.Fatalf("usage rows = %+v, %v; want 3", recs, err)
	}
	byAgent := map[string]store.UsageRecord{}
	for _, r := range recs {
		byAgent[r.Agent] = r
	}
	for agent, want := range map[string]struct {
		cost     pricing.Money
		unpriced bool
	}{"mini": {525_000, false}, "dated": {2_750_000, false}, "local": {0, true}} {
		if r := byAgent[agent]; r.Cost != want.cost || r.Unpriced != want.unpriced {
			t.Errorf("%s's usage row: cost %v unpriced %v; want %v, %v", agent, r.Cost, r.Unpriced, want.cost, want.unpriced)
		}
	}

	keyID := recs[0].APIKeyID
	if keyID == "" {
		t.Fatal("usage rows name no API key")
	}
	type totals struct {
		By       string
		Currency string
		Data     []store.UsageTotal
	}
	tot := func(key string, requests int64, cost pricing.Money, unpriced int64) store.UsageTotal {
		return store.UsageTotal{Key: key, Requests: requests, Cost: cost, Unpriced: unpriced}
	}
	only := cmpopts.IgnoreFields(store.UsageTotal{}, "InputTokens", "OutputTokens", "CachedTokens", "LatencyMs", "UpstreamMs", "Errors")
	since := url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))
	for _, tc := range []struct {
		by   string
		want []store.UsageTotal
	}{
		{"day", []store.UsageTotal{tot(time.Now().UTC().Format(time.DateOnly), 3, 3_275_000, 1)}},
		{"agent", []store.UsageTotal{tot("dated", 1, 2_750_000, 0), tot("local", 1, 0, 1), tot("mini", 1, 525_000, 0)}},
		{"workflow", []store.UsageTotal{tot("", 3, 3_275_000, 1)}},
		{"user", []store.UsageTotal{tot("ann", 2, 525_000, 1), tot("bob", 1, 2_750_000, 0)}},
		{"api_key", []store.UsageTotal{tot(keyID, 3, 3_275_000, 1)}},
		{"model", []store.UsageTotal{tot("fake/fake-model", 1, 0, 1), tot("openai/gpt-4o-2024-08-06", 1, 2_750_000, 0), tot("openai/gpt-4o-mini", 1, 525_000, 0)}},
	} {
		var got totals
		c.json("GET", "/api/usage?since="+since+"&by="+tc.by, "", http.StatusOK, &got)
		if got.Currency != "USD" {
			t.Errorf("by=%s: currency %q; want USD", tc.by, got.Currency)
		}
		if diff := cmp.Diff(tc.want, got.Data, only); diff != "" {
			t.Errorf("GET /api/usage?by=%s (-want +got):\n%s", tc.by, diff)
		}
	}
	var plain struct{ Data []store.UsageSummary }
	c.json("GET", "/api/usage?since="+since, "", http.StatusOK, &plain)
	var cost pricing.Money
	for _, s := range plain.Data {
		cost += s.Cost
	}
	if len(plain.Data) != 3 || cost != 3_275_000 {
		t.Errorf("GET /api/usage = %+v; want 3 rows costing 0.003275 in all", plain.Data)
	}
}
