package platform_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/tool"
)

// logBuffer collects a logger's output; the usage recorder may log from
// its own goroutine.
type logBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newStore(t *testing.T) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

func newBox(t *testing.T) *secret.Box {
	t.Helper()
	key := make([]byte, secret.KeySize)
	rand.Read(key)
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// newPlatform starts a platform on st; a nil logger discards. Detection
// is left off unless opts turns it on, and never probes a real Ollama.
func newPlatform(t *testing.T, st store.Store, opts platform.Options) *platform.Platform {
	t.Helper()
	if opts.OllamaURL == "" {
		opts.OllamaURL = deadURL
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	p, err := platform.New(context.Background(), st, newBox(t), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// deadURL is an OpenAI-style base URL where nothing listens. It is not a
// closed test server's port: a parallel test's server could take it.
const deadURL = "http://127.0.0.1:1/v1"

func ptr[T any](v T) *T { return &v }

// noRetry keeps failure tests to one upstream request.
var noRetry = middleware.Settings{Retry: middleware.RetrySettings{Enabled: ptr(false)}}

// fakeProvider is a configured provider named name on fake.
func fakeProvider(name string, fake *llmtest.Server, key string) platform.ProviderConfig {
	return platform.ProviderConfig{Name: name, Type: "openai", BaseURL: fake.URL + "/v1", APIKey: key, Middleware: noRetry}
}

func ask(ctx context.Context, a *platform.Agent) (agent.Result, error) {
	return a.Runtime.Generate(ctx, agent.Input{Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}})
}

func TestConfigAgents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t)
	st := newStore(t)
	helper := platform.AgentSpec{Name: "helper", Model: "fake/fake-model", Instructions: "Be brief.", Tools: []string{"calculator"}, MaxSteps: 3}
	retired := platform.AgentSpec{Name: "retired", Model: "fake/fake-model"}
	opts := platform.Options{Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")}, Agents: []platform.AgentSpec{helper, retired}}
	p := newPlatform(t, st, opts)
	ws := p.DefaultWorkspace()
	if ws.Name != "default" {
		t.Errorf("default workspace is %q, want default", ws.Name)
	}
	list, err := p.Agents(ctx, ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "helper" || list[1].Name != "retired" {
		t.Fatalf("agents = %+v, want helper and retired", list)
	}
	a := list[0]
	want := store.Agent{
		ID: a.ID, WorkspaceID: ws.ID, Name: "helper", Model: "fake/fake-model", Instructions: "Be brief.",
		Tools: []string{"calculator"}, Params: store.AgentParams{MaxSteps: 3}, Source: store.SourceConfig,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("config agent (-want +got):\n%s", diff)
	}

	changed := a
	changed.Instructions = "Be long."
	if _, err := p.UpdateAgent(ctx, changed); !errors.Is(err, platform.ErrConfigAgent) {
		t.Errorf("UpdateAgent(config agent) = %v, want ErrConfigAgent", err)
	}
	if err := p.DeleteAgent(ctx, ws.ID, a.ID); !errors.Is(err, platform.ErrConfigAgent) {
		t.Errorf("DeleteAgent(config agent) = %v, want ErrConfigAgent", err)
	}
	if got, err := p.GetAgent(ctx, ws.ID, a.ID); err != nil || got.Instructions != "Be brief." {
		t.Errorf("config agent after refused changes = %+v, %v; want it unchanged", got, err)
	}
	if got, err := p.GetAgent(ctx, ws.ID, "helper"); err != nil || got.ID != a.ID {
		t.Errorf("GetAgent by name = %+v, %v; want helper", got, err)
	}
	// The store never holds the file's agents.
	if rows, err := st.Agents().List(ctx, ws.ID); err != nil || len(rows) != 0 {
		t.Errorf("stored agents = %+v, %v; want none: the file's live in memory", rows, err)
	}
	if _, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: ws.ID, Name: "helper", Model: "fake/fake-model"}); !errors.Is(err, platform.ErrConfigAgent) {
		t.Errorf("CreateAgent(helper) = %v, want ErrConfigAgent: the file has it", err)
	}

	// An API agent of the default workspace is not the file's business.
	if _, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: ws.ID, Name: "mine", Model: "fake/fake-model"}); err != nil {
		t.Fatal(err)
	}

	// A second process on the same database with another file has its own
	// file agents and leaves the first one's alone: the first still lists
	// and runs retired and the old helper.
	helper.Instructions = "Be precise."
	opts.Agents = []platform.AgentSpec{helper}
	p2 := newPlatform(t, st, opts)
	names := func(p *platform.Platform) []string {
		list, err := p.Agents(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range list {
			out = append(out, a.Name+":"+a.Instructions)
		}
		return out
	}
	if diff := cmp.Diff([]string{"helper:Be precise.", "mine:"}, names(p2)); diff != "" {
		t.Errorf("second process's agents (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"helper:Be brief.", "mine:", "retired:"}, names(p)); diff != "" {
		t.Errorf("first process's agents after the second started (-want +got):\n%s", diff)
	}
	if _, err := p.Agent(ctx, ws.ID, "retired"); err != nil {
		t.Errorf("first process's retired agent: %v", err)
	}
}

func TestConfigAgentErrors(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t)
	tests := []struct {
		name   string
		agent  platform.AgentSpec
		target error
		names  []string // the error must mention each
	}{
		{"unknown tool", platform.AgentSpec{Name: "mathbot", Model: "fake/m", Tools: []string{"calculator", "abacus"}}, tool.ErrUnknownTool, []string{"mathbot", "abacus"}},
		{"unknown provider", platform.AgentSpec{Name: "lost", Model: "nowhere/m"}, platform.ErrUnknownProvider, []string{"lost", "nowhere"}},
		{"model without provider", platform.AgentSpec{Name: "bare", Model: "gpt-4o"}, platform.ErrInvalidAgent, []string{"bare", "gpt-4o"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := &platform.Options{
				Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")},
				Agents:    []platform.AgentSpec{tt.agent},
			}
			p, err := platform.New(context.Background(), newStore(t), newBox(t), opts)
			if p != nil {
				t.Cleanup(p.Stop)
			}
			if !errors.Is(err, tt.target) {
				t.Fatalf("New = %v, want %v", err, tt.target)
			}
			for _, s := range tt.names {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
		})
	}
}

func TestCreateAgentValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t)
	st := newStore(t)
	p := newPlatform(t, st, platform.Options{Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")}})
	ws := p.DefaultWorkspace().ID
	tests := []struct {
		name   string
		agent  store.Agent
		target error
	}{
		{"model without slash", store.Agent{Model: "fake-model"}, platform.ErrInvalidAgent},
		{"model without id", store.Agent{Model: "fake/"}, platform.ErrInvalidAgent},
		{"unknown provider", store.Agent{Model: "nowhere/m"}, platform.ErrUnknownProvider},
		{"unknown tool", store.Agent{Model: "fake/m", Tools: []string{"abacus"}}, tool.ErrUnknownTool},
		{"tool listed twice", store.Agent{Model: "fake/m", Tools: []string{"calculator", "calculator"}}, platform.ErrInvalidAgent},
		{"middleware not JSON", store.Agent{Model: "fake/m", Params: store.AgentParams{Middleware: []byte(`{"rate_limit":`)}}, platform.ErrInvalidAgent},
		{"middleware wrong shape", store.Agent{Model: "fake/m", Params: store.AgentParams{Middleware: []byte(`{"rate_limit":{"rps":"fast"}}`)}}, platform.ErrInvalidAgent},
		{"middleware out of range", store.Agent{Model: "fake/m", Params: store.AgentParams{Middleware: []byte(`{"rate_limit":{"rps":-1}}`)}}, platform.ErrInvalidAgent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.agent.WorkspaceID, tt.agent.Name = ws, "a"
			if _, err := p.CreateAgent(ctx, tt.agent); !errors.Is(err, tt.target) {
				t.Errorf("CreateAgent = %v, want %v", err, tt.target)
			}
		})
	}
	if list, _ := p.Agents(ctx, ws); len(list) != 0 {
		t.Errorf("refused agents were stored: %+v", list)
	}

	// The API cannot create config agents: the source is always api.
	a, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: ws, Name: "ok", Model: "fake/m", Source: store.SourceConfig,
		Params: store.AgentParams{Middleware: []byte(`{"retry":{"max_retries":1},"tool_progress":true}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Source != store.SourceAPI {
		t.Errorf("created agent has source %q, want api", a.Source)
	}
}

func TestAgentResolution(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t)
	p := newPlatform(t, newStore(t), platform.Options{Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")}})
	ws := p.DefaultWorkspace().ID

	if _, err := p.Agent(ctx, ws, "writer"); !errors.Is(err, platform.ErrUnknownAgent) {
		t.Fatalf("Agent(unknown) = %v, want ErrUnknownAgent", err)
	}
	row, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: ws, Name: "writer", Model: "fake/fake-model", Instructions: "v1", Tools: []string{"current_time"},
		Params: store.AgentParams{Middleware: []byte(`{"tool_progress":true}`)}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Agent(ctx, ws, "writer")
	if err != nil {
		t.Fatal(err)
	}
	if a.Runtime.Instructions != "v1" || a.Provider != "fake" || a.ModelID != "fake-model" || !a.ToolProgress ||
		len(a.Runtime.Tools) != 1 || a.Runtime.Tools[0].Name() != "current_time" {
		t.Errorf("resolved agent = %+v (runtime %+v)", a, a.Runtime)
	}

	row.Instructions = "v2"
	if _, err := p.UpdateAgent(ctx, row); err != nil {
		t.Fatal(err)
	}
	a, err = p.Agent(ctx, ws, "writer")
	if err != nil {
		t.Fatal(err)
	}
	if a.Runtime.Instructions != "v2" {
		t.Errorf("after UpdateAgent, instructions = %q, want v2", a.Runtime.Instructions)
	}

	// A rename frees the old name at once.
	row.Name = "author"
	if _, err := p.UpdateAgent(ctx, row); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Agent(ctx, ws, "writer"); !errors.Is(err, platform.ErrUnknownAgent) {
		t.Errorf("Agent(old name) after rename = %v, want ErrUnknownAgent", err)
	}
	if _, err := p.Agent(ctx, ws, "author"); err != nil {
		t.Errorf("Agent(new name) after rename: %v", err)
	}

	if err := p.DeleteAgent(ctx, ws, row.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Agent(ctx, ws, "author"); !errors.Is(err, platform.ErrUnknownAgent) {
		t.Errorf("Agent after DeleteAgent = %v, want ErrUnknownAgent", err)
	}
}

// TestAgentNoticesStoreEdits changes the recheck interval, so it is not
// parallel.
func TestAgentNoticesStoreEdits(t *testing.T) {
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t)
	st := newStore(t)
	p := newPlatform(t, st, platform.Options{Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")}})
	ws := p.DefaultWorkspace().ID
	row, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: ws, Name: "writer", Model: "fake/fake-model", Instructions: "v1"})
	if err != nil {
		t.Fatal(err)
	}

	platform.SetAgentRecheck(t, 0) // read the row on every call
	first, err := p.Agent(ctx, ws, "writer")
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.Agent(ctx, ws, "writer")
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Error("an unchanged agent was rebuilt on recheck; its middleware (and rate limiter) would not survive between requests")
	}

	platform.SetAgentRecheck(t, time.Hour)
	if _, err := p.Agent(ctx, ws, "writer"); err != nil { // fresh check time
		t.Fatal(err)
	}
	// Another process edits the agent.
	row.Instructions = "v2"
	if _, err := st.Agents().Update(ctx, row); err != nil {
		t.Fatal(err)
	}
	a, err := p.Agent(ctx, ws, "writer")
	if err != nil {
		t.Fatal(err)
	}
	if a.Runtime.Instructions != "v1" {
		t.Errorf("within the recheck interval, instructions = %q, want the cached v1", a.Runtime.Instructions)
	}

	platform.SetAgentRecheck(t, 0)
	a, err = p.Agent(ctx, ws, "writer")
	if err != nil {
		t.Fatal(err)
	}
	if a.Runtime.Instructions != "v2" {
		t.Errorf("after the recheck interval, instructions = %q, want v2", a.Runtime.Instructions)
	}

	// Another process deletes it.
	if err := st.Agents().Delete(ctx, ws, row.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Agent(ctx, ws, "writer"); !errors.Is(err, platform.ErrUnknownAgent) {
		t.Errorf("after a delete elsewhere, Agent = %v, want ErrUnknownAgent", err)
	}
}

func TestAgentWorkspaceIsolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t)
	st := newStore(t)
	p := newPlatform(t, st, platform.Options{Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")}})
	wsA := p.DefaultWorkspace().ID
	wsB, err := st.Workspaces().GetOrCreate(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: wsA, Name: "writer", Model: "fake/m", Instructions: "A's"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Agent(ctx, wsA, "writer"); err != nil { // cached for A now
		t.Fatal(err)
	}
	if a, err := p.Agent(ctx, wsB.ID, "writer"); !errors.Is(err, platform.ErrUnknownAgent) {
		t.Fatalf("workspace B resolved A's agent: %+v, %v", a, err)
	}
	// B may have its own agent of the same name.
	if _, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: wsB.ID, Name: "writer", Model: "fake/m", Instructions: "B's"}); err != nil {
		t.Fatal(err)
	}
	for ws, want := range map[string]string{wsA: "A's", wsB.ID: "B's"} {
		a, err := p.Agent(ctx, ws, "writer")
		if err != nil {
			t.Fatal(err)
		}
		if a.Runtime.Instructions != want {
			t.Errorf("workspace %s resolved instructions %q, want %q", ws, a.Runtime.Instructions, want)
		}
	}
}

func TestRateLimitShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "one"}, llmtest.Turn{Text: "two"})
	prov := fakeProvider("limited", fake, "k")
	// One request per 1000 s, nobody waits: a second request is refused
	// at once if and only if it draws on an emptied bucket.
	prov.Middleware.RateLimit = middleware.RateLimitSettings{Enabled: ptr(true), RPS: 0.001, Burst: 1, Queue: -1}
	p := newPlatform(t, newStore(t), platform.Options{
		Providers: []platform.ProviderConfig{prov},
		Agents: []platform.AgentSpec{
			{Name: "first", Model: "limited/m"},
			{Name: "second", Model: "limited/m"},
			// Settings other than rate_limit keep the provider's bucket.
			{Name: "quiet", Model: "limited/m", Middleware: middleware.Settings{Logging: middleware.LoggingSettings{Enabled: ptr(false)}}},
			// Its own rate_limit gives it its own bucket.
			{Name: "own", Model: "limited/m", Middleware: middleware.Settings{RateLimit: middleware.RateLimitSettings{RPS: 0.001, Burst: 1}}},
		},
	})
	ws := p.DefaultWorkspace().ID
	call := func(name string) error {
		t.Helper()
		a, err := p.Agent(ctx, ws, name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ask(ctx, a)
		return err
	}
	wantLimited := func(name string, err error) {
		t.Helper()
		var le *llm.Error
		if !errors.As(err, &le) || le.Kind != llm.KindRateLimit || le.Status != 0 {
			t.Errorf("%s: err = %v, want a local rate limit refusal", name, err)
		}
	}

	if err := call("first"); err != nil {
		t.Fatalf("first: %v", err)
	}
	wantLimited("second", call("second"))
	wantLimited("quiet", call("quiet"))
	if err := call("own"); err != nil {
		t.Errorf("own: %v; an agent with its own rate_limit must not share the provider's bucket", err)
	}
	wantLimited("own again", call("own"))
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("provider received %d requests, want 2", n)
	}
}

func TestPutCredentialConfigProvider(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "ok"})
	st := newStore(t)
	box := newBox(t)
	p, err := platform.New(ctx, st, box, &platform.Options{
		Providers: []platform.ProviderConfig{fakeProvider("keyless", fake, "")},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "keyless/m"}},
		OllamaURL: deadURL,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	wsA := p.DefaultWorkspace().ID
	wsB, err := st.Workspaces().GetOrCreate(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}

	const key = "sk-workspace-a-secret"
	if _, err := p.PutCredential(ctx, wsA, "keyless", key); err != nil {
		t.Fatal(err)
	}
	cred, err := st.Credentials().Get(ctx, wsA, "keyless")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(cred.Ciphertext, []byte(key)) || cred.KeyID != box.KeyID() {
		t.Errorf("stored credential = %q (key id %s), want it sealed by key %s", cred.Ciphertext, cred.KeyID, box.KeyID())
	}
	infos, err := p.Providers(ctx, wsA)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || !infos[0].HasKey {
		t.Errorf("providers of A = %+v, want keyless with has_key", infos)
	}

	a, err := p.Agent(ctx, wsA, "helper")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ask(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := fake.Requests()[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("upstream Authorization = %q, want the stored key", got)
	}

	// A's sealed key copied onto B's row does not open for B.
	if _, err := st.Credentials().Put(ctx, store.Credential{WorkspaceID: wsB.ID, Provider: "keyless", Ciphertext: cred.Ciphertext, KeyID: cred.KeyID}); err != nil {
		t.Fatal(err)
	}
	bAgent, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: wsB.ID, Name: "thief", Model: "keyless/m"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Agent(ctx, wsB.ID, bAgent.Name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ask(ctx, b)
	if !errors.Is(err, secret.ErrDecrypt) {
		t.Errorf("B's request with A's ciphertext = %v, want secret.ErrDecrypt", err)
	}
	if err != nil && strings.Contains(err.Error(), key) {
		t.Errorf("error reveals the key: %v", err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("provider received %d requests, want only A's", n)
	}
}

func TestPutCredentialCreatesWorkspaceProvider(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	p := newPlatform(t, st, platform.Options{})
	wsA := p.DefaultWorkspace().ID
	wsB, err := st.Workspaces().GetOrCreate(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.PutCredential(ctx, wsA, "openai", "sk-1"); err != nil {
		t.Fatal(err)
	}
	// Storing a new key for it again replaces the key.
	if _, err := p.PutCredential(ctx, wsA, "openai", "sk-2"); err != nil {
		t.Fatal(err)
	}
	got, err := p.Providers(ctx, wsA)
	if err != nil {
		t.Fatal(err)
	}
	want := []platform.ProviderInfo{{Name: "openai", Type: "openai", Origin: platform.OriginWorkspace, HasKey: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("providers of A (-want +got):\n%s", diff)
	}
	if row, err := st.Providers().GetByName(ctx, wsA, "openai"); err != nil || row.Source != store.SourceAPI {
		t.Errorf("provider row = %+v, %v; want source api", row, err)
	}
	if got, _ := p.Providers(ctx, wsB.ID); len(got) != 0 {
		t.Errorf("workspace B sees A's provider: %+v", got)
	}
	// An agent of A can use it at once.
	if _, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: wsA, Name: "gpt", Model: "openai/gpt-4o-mini"}); err != nil {
		t.Errorf("CreateAgent on the new provider: %v", err)
	}
	if _, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: wsB.ID, Name: "gpt", Model: "openai/gpt-4o-mini"}); !errors.Is(err, platform.ErrUnknownProvider) {
		t.Errorf("CreateAgent in B on A's provider = %v, want ErrUnknownProvider", err)
	}

	_, err = p.PutCredential(ctx, wsA, "mistral", "sk-3")
	if !errors.Is(err, platform.ErrUnknownProvider) || !strings.Contains(err.Error(), "mistral") {
		t.Errorf("PutCredential(mistral) = %v, want ErrUnknownProvider naming it", err)
	}
	if _, err := st.Providers().GetByName(ctx, wsA, "mistral"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a provider row was created for an unknown name: %v", err)
	}
}

func TestUsageRecorder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	p := newPlatform(t, st, platform.Options{})
	ws := p.DefaultWorkspace().ID
	// More records than the recorder buffers, so some requests write
	// their own.
	const writers, each = 20, 80
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				p.RecordUsage(store.UsageRecord{WorkspaceID: ws, Agent: "a", Model: "m", Provider: "p", InputTokens: 1, Status: store.StatusOK})
			}
		})
	}
	wg.Wait()
	p.Stop()
	p.Stop() // idempotent
	total := func() store.UsageSummary {
		t.Helper()
		sum, err := st.Usage().Summary(ctx, ws, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum) != 1 {
			t.Fatalf("summary = %+v, want one row", sum)
		}
		return sum[0]
	}
	if got := total(); got.Requests != writers*each || got.InputTokens != writers*each {
		t.Errorf("after Stop, %d records (%d tokens) stored, want %d", got.Requests, got.InputTokens, writers*each)
	}

	p.RecordUsage(store.UsageRecord{WorkspaceID: ws, Agent: "a", Model: "m", Provider: "p", InputTokens: 1, Status: store.StatusOK})
	if got := total(); got.Requests != writers*each+1 {
		t.Errorf("a record after Stop was not stored: %d records, want %d", got.Requests, writers*each+1)
	}
}

// TestInlineAgentRefusesBareModel: a model without its provider is not
// sent to whichever provider comes first; the error lists the choices.
func TestInlineAgentRefusesBareModel(t *testing.T) {
	t.Parallel()
	a := llmtest.NewOpenAI(t)
	b := llmtest.NewOpenAI(t)
	p := newPlatform(t, newStore(t), platform.Options{Providers: []platform.ProviderConfig{fakeProvider("alpha", a, "k"), fakeProvider("beta", b, "k")}})
	ws := p.DefaultWorkspace().ID
	_, err := p.InlineAgent(context.Background(), ws, store.Agent{Model: "gpt-4o"})
	if !errors.Is(err, platform.ErrInvalidAgent) || !strings.Contains(err.Error(), "alpha, beta") || !strings.Contains(err.Error(), "PROVIDER/MODEL") {
		t.Errorf("bare model = %v, want ErrInvalidAgent naming alpha, beta and PROVIDER/MODEL", err)
	}
	if _, err := p.InlineAgent(context.Background(), ws, store.Agent{Model: "beta/gpt-4o"}); err != nil {
		t.Errorf("beta/gpt-4o: %v", err)
	}
}
