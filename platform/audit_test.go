package platform_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/store"
)

// recorder keeps the events it is given.
type recorder struct {
	mu     sync.Mutex
	events []store.AuditEvent // guarded by mu
}

func (r *recorder) Record(_ context.Context, e store.AuditEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) take() []store.AuditEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// TestAuditEvents: safety events of a call without a request principal (a
// workflow's agent node) are filed under the agent's workspace; with a
// principal, under its workspace and API key. Credential and agent changes
// are recorded, never the key.
func TestAuditEvents(t *testing.T) {
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "ok"}, llmtest.Turn{Text: "ok"})
	prov := fakeProvider("fake", fake, "k")
	prov.Middleware.PII = &middleware.PIISettings{}
	rec := &recorder{}
	st := newStore(t)
	p := newPlatform(t, st, platform.Options{Providers: []platform.ProviderConfig{prov},
		Agents: []platform.AgentSpec{{Name: "helper", Model: "fake/m"}}, Audit: rec})
	ws := p.DefaultWorkspace()

	a, err := p.Agent(t.Context(), ws.ID, "helper")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Runtime.Generate(t.Context(), agentInput("mail bob@example.org")); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 1 || got[0].Action != "pii.detected" || got[0].WorkspaceID != ws.ID || got[0].Actor != audit.ActorSystem {
		t.Fatalf("events without a principal = %+v, want one pii.detected in %s by system", got, ws.ID)
	}
	if strings.Contains(string(got[0].Details), "bob@") || !strings.Contains(string(got[0].Details), `"Global.Email":1`) {
		t.Errorf("details = %s, want entity counts and no value", got[0].Details)
	}

	ctx := platform.WithPrincipal(t.Context(), platform.Principal{WorkspaceID: ws.ID, APIKeyID: "k1", User: "carol@example.com"})
	if _, err := a.Runtime.Generate(ctx, agentInput("mail bob@example.org")); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 1 || got[0].Actor != "apikey:k1" {
		t.Fatalf("events with a principal = %+v, want one by apikey:k1 (never the end user)", got)
	}

	if _, err := p.PutCredential(ctx, ws.ID, "fake", "sk-secret-value"); err != nil {
		t.Fatal(err)
	}
	row, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: ws.ID, Name: "writer", Model: "fake/m"})
	if err != nil {
		t.Fatal(err)
	}
	row.Model = "fake/m2"
	if _, err := p.UpdateAgent(ctx, row); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteAgent(ctx, ws.ID, row.ID); err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range rec.take() {
		actions = append(actions, e.Action+" "+e.Target)
		if strings.Contains(string(e.Details), "sk-secret") {
			t.Errorf("%s details carry the credential: %s", e.Action, e.Details)
		}
		if e.Actor != "apikey:k1" || e.WorkspaceID != ws.ID {
			t.Errorf("%s by %q in %q, want apikey:k1 in %s", e.Action, e.Actor, e.WorkspaceID, ws.ID)
		}
	}
	want := "credential.put provider:fake,agent.create agent:writer,agent.update agent:writer,agent.delete agent:writer"
	if strings.Join(actions, ",") != want {
		t.Errorf("events = %v, want %s", actions, want)
	}
}

func agentInput(text string) agent.Input {
	return agent.Input{Messages: []llm.Message{llm.Text(llm.RoleUser, text)}}
}
