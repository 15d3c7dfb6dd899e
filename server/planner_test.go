package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
)

// The planner stream refuses bad bodies with a 400 naming the field, and
// a plan the gate refuses ends the stream with an error event holding the
// plan's JSON paths; nothing is run.
func TestPlannerStreamRefuses(t *testing.T) {
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: `{"nodes":[{"id":"a","kind":"agent"},{"id":"b","kind":"teleport"}],"edges":[{"from":"a","to":"b"}]}`})
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{fakeProvider(fake)}, Workflows: true})
	c := client{t: t, base: env.URL, key: env.Key}
	for body, param := range map[string]string{
		`{"model":"fake/fake-model"}`:                 "goal",
		`{"goal":"x"}`:                                "model",
		`{"goal":"x","model":"fake/m","planner":"m"}`: "planner",
	} {
		resp, b := c.do("POST", "/api/planner/stream", body)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"param":"`+param+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", body, resp.StatusCode, b, param)
		}
	}
	resp, b := c.do("POST", "/api/planner/stream", `{"goal":"x","model":"fake/fake-model"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "event: error") || !strings.Contains(string(b), `"path":"nodes[1].kind"`) {
		t.Fatalf("refused plan: %d %s", resp.StatusCode, b)
	}
	if strings.Contains(string(b), "event: run") {
		t.Error("a refused plan was run")
	}
	var runs struct{ Data []any }
	c.json("GET", "/api/runs", "", http.StatusOK, &runs)
	if len(runs.Data) != 0 {
		t.Errorf("%d runs after a refused plan, want none", len(runs.Data))
	}
}
