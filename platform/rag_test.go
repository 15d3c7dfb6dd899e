package platform_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/rag"
	"github.com/agentcraftlab/agentcraft/search"
)

// knowledge answers every search with one passage holding an e-mail
// address and records the bases searched.
type knowledge struct {
	mu    sync.Mutex // guards calls
	calls [][]string // workspace id, then the bases
}

func (k *knowledge) Search(_ context.Context, workspaceID string, kbs []string, _ search.Query) (search.Result, error) {
	k.mu.Lock()
	k.calls = append(k.calls, append([]string{workspaceID}, kbs...))
	k.mu.Unlock()
	return search.Result{Hits: []search.Hit{{ID: "h#0", Score: 1, Text: "Refund questions go to alice.refunds@example.com within 14 days.",
		Metadata: map[string]string{"source": "handbook.pdf", "page": "3"}}}}, nil
}

func (k *knowledge) Calls() [][]string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.calls)
}

func TestAgentRetrievesKnowledge(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t)
	kn := &knowledge{}
	prov := fakeProvider("fake", fake, "k")
	// Masking on the provider: the passages rag adds must pass through it.
	prov.Middleware.PII = &middleware.PIISettings{Mode: "redact"}
	p := newPlatform(t, newStore(t), platform.Options{
		Providers: []platform.ProviderConfig{prov},
		Agents: []platform.AgentSpec{
			{Name: "helper", Model: "fake/m", Instructions: "Be brief.", KnowledgeBases: []string{"handbook"}},
			{Name: "plain", Model: "fake/m"},
		},
		Knowledge: kn,
	})
	ws := p.DefaultWorkspace().ID
	ctx := context.Background()
	question := agent.Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "Who handles refunds?")}}

	helper, err := p.Agent(ctx, ws, "helper")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"handbook"}, helper.Row.Params.KnowledgeBases); diff != "" {
		t.Errorf("stored knowledge bases (-want +got):\n%s", diff)
	}
	fake.Push(llmtest.Turn{Text: "Alice [1]."})
	cctx, col := rag.WithCollector(ctx)
	if _, err := helper.Runtime.Generate(cctx, question); err != nil {
		t.Fatal(err)
	}
	body := string(fake.Requests()[0].Body)
	for _, want := range []string{"Be brief.", "[1] handbook.pdf, p. 3 — Refund questions go to"} {
		if !strings.Contains(body, want) {
			t.Errorf("upstream request lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "alice.refunds@example.com") {
		t.Errorf("upstream request holds the passage's e-mail address: PII masking did not see the retrieved context:\n%s", body)
	}
	if cites := col.Citations(); len(cites) != 1 || cites[0].Source != "handbook.pdf" || cites[0].KB != "handbook" {
		t.Errorf("citations = %+v, want handbook.pdf of handbook", cites)
	}

	// An agent without bases of its own searches those of the request.
	plain, err := p.Agent(ctx, ws, "plain")
	if err != nil {
		t.Fatal(err)
	}
	fake.Push(llmtest.Turn{Text: "ok"}, llmtest.Turn{Text: "ok"})
	if _, err := plain.Runtime.Generate(rag.WithKnowledgeBases(ctx, "upload-7"), question); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Runtime.Generate(ctx, question); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{ws, "handbook"}, {ws, "upload-7"}}, kn.Calls()); diff != "" {
		t.Errorf("searches (-want +got):\n%s", diff)
	}
	if body := string(fake.Requests()[2].Body); strings.Contains(body, rag.Instructions) {
		t.Errorf("request without bases got sources:\n%s", body)
	}
}

func TestAgentWithoutKnowledgeService(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "ok"})
	var logs logBuffer
	p := newPlatform(t, newStore(t), platform.Options{
		Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/m", KnowledgeBases: []string{"handbook"}}},
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
	})
	a, err := p.Agent(context.Background(), p.DefaultWorkspace().ID, "helper")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ask(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if body := string(fake.Requests()[0].Body); strings.Contains(body, rag.Instructions) {
		t.Errorf("request got sources without a knowledge service:\n%s", body)
	}
	if !strings.Contains(logs.String(), "agent knowledge bases ignored") {
		t.Errorf("no warning that the agent's bases are ignored; logs:\n%s", logs.String())
	}
}
