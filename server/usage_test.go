package server_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// TestUsageBy: GET /api/usage?by= totals one real completion and records
// of earlier days per day (UTC), agent, actor and provider/model, within
// since and the caller's workspace, and refuses a group it does not know.
func TestUsageBy(t *testing.T) {
	t.Parallel()
	env, fake, c := newEnv(t, helper)
	fake.Push(llmtest.Turn{Text: "Hello!", Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}})
	c.json("POST", "/v1/chat/completions", `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`, http.StatusOK, nil)
	env.Platform.Stop() // flush the usage recorder

	ctx := context.Background()
	live, err := env.Store.Usage().List(ctx, env.Workspace.ID, time.Time{}, 0)
	if err != nil || len(live) != 1 {
		t.Fatalf("the completion recorded %+v, %v; want one record", live, err)
	}
	keyActor := live[0].Actor
	if keyActor == "" {
		t.Fatalf("the completion's usage record names no actor: %+v", live[0])
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	yesterday, lastWeek := today.AddDate(0, 0, -1), today.AddDate(0, 0, -7)
	old := func(at time.Time, agent, actor string, in, out int) store.UsageRecord {
		return store.UsageRecord{WorkspaceID: env.Workspace.ID, Agent: agent, Actor: actor, Provider: "fake", Model: "other-model",
			InputTokens: in, OutputTokens: out, Status: store.StatusOK, CreatedAt: at}
	}
	seed := []store.UsageRecord{
		old(yesterday.Add(time.Hour), "writer", "user:ann", 100, 10),
		old(yesterday.Add(23*time.Hour), "helper", "user:ann", 200, 20),
		old(lastWeek, "writer", "user:bob", 5000, 500), // before since below
	}
	if err := env.Store.Usage().Record(ctx, seed...); err != nil {
		t.Fatal(err)
	}
	wsB, err := env.Store.Workspaces().GetOrCreate(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Store.Usage().Record(ctx, store.UsageRecord{WorkspaceID: wsB.ID, Agent: "helper", Actor: "user:eve",
		Provider: "fake", Model: "fake-model", InputTokens: 9999, Status: store.StatusOK, CreatedAt: yesterday.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}

	since := url.QueryEscape(today.AddDate(0, 0, -2).Format(time.RFC3339))
	type totals struct {
		Since time.Time
		By    string
		Data  []store.UsageTotal
	}
	tot := func(key string, requests, in, out int64) store.UsageTotal {
		return store.UsageTotal{Key: key, Requests: requests, InputTokens: in, OutputTokens: out}
	}
	// live marks the total holding the real completion: its fake model
	// has no price, so it counts as unpriced.
	withLive := func(u store.UsageTotal) store.UsageTotal { u.Unpriced = 1; return u }
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
	ignore := cmpopts.IgnoreFields(store.UsageTotal{}, "LatencyMs", "UpstreamMs")
	for _, tc := range []struct {
		by   string
		want []store.UsageTotal
	}{
		{"day", []store.UsageTotal{tot(day(yesterday), 2, 300, 30), withLive(tot(day(today), 1, 12, 3))}},
		{"agent", []store.UsageTotal{withLive(tot("helper", 2, 212, 23)), tot("writer", 1, 100, 10)}},
		{"actor", []store.UsageTotal{withLive(tot(keyActor, 1, 12, 3)), tot("user:ann", 2, 300, 30)}},
		{"model", []store.UsageTotal{withLive(tot("fake/fake-model", 1, 12, 3)), tot("fake/other-model", 2, 300, 30)}},
	} {
		var got totals
		c.json("GET", "/api/usage?since="+since+"&by="+tc.by, "", http.StatusOK, &got)
		if got.By != tc.by {
			t.Errorf("by=%s answered by %q", tc.by, got.By)
		}
		if diff := cmp.Diff(tc.want, got.Data, ignore); diff != "" {
			t.Errorf("GET /api/usage?by=%s (-want +got):\n%s", tc.by, diff)
		}
	}

	// Without by the answer is as before: per agent, provider and model.
	var plain struct{ Data []store.UsageSummary }
	c.json("GET", "/api/usage?since="+since, "", http.StatusOK, &plain)
	if len(plain.Data) != 3 || plain.Data[0].Agent != "helper" || plain.Data[0].Model != "fake-model" {
		t.Errorf("GET /api/usage without by = %+v; want the three agent/provider/model rows", plain.Data)
	}

	// The default since is a day ago: yesterday's 01:00 record may or may
	// not be in it, last week's never is.
	var recent totals
	c.json("GET", "/api/usage?by=actor", "", http.StatusOK, &recent)
	for _, r := range recent.Data {
		if r.Key == "user:bob" {
			t.Errorf("by=actor with the default since counts last week's record: %+v", recent.Data)
		}
	}

	var other totals
	client{t: t, base: env.URL, key: servertest.CreateKey(t, env.Store, wsB.ID)}.json("GET", "/api/usage?by=agent&since="+since, "", http.StatusOK, &other)
	if diff := cmp.Diff([]store.UsageTotal{tot("helper", 1, 9999, 0)}, other.Data, ignore); diff != "" {
		t.Errorf("workspace b by agent (-want +got):\n%s", diff)
	}

	for _, bad := range []string{"week", "", "Day", "agent,day"} {
		resp, body := c.do("GET", "/api/usage?by="+url.QueryEscape(bad), "")
		if d := wantError(t, resp, body, http.StatusBadRequest, "invalid_request"); d.Param != "by" {
			t.Errorf("by=%q: param = %v, want by (%s)", bad, d.Param, body)
		}
	}
}
