package provider_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/provider"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// logBuffer collects a logger's output.
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

// deadURL is an OpenAI-style base URL where nothing listens.
const deadURL = "http://127.0.0.1:1/v1"

func ptr[T any](v T) *T { return &v }

// noRetry keeps failure tests to one upstream request.
var noRetry = middleware.Settings{Retry: middleware.RetrySettings{Enabled: ptr(false)}}

func fakeProvider(name string, fake *llmtest.Server, key string) provider.Config {
	return provider.Config{Name: name, Type: "openai", BaseURL: fake.URL + "/v1", APIKey: key, Middleware: noRetry}
}

// newRegistry builds a registry on st; detection never probes a real
// Ollama or reads the real environment unless opts says so.
func newRegistry(t *testing.T, st store.Store, box *secret.Box, opts provider.Options) *provider.Registry {
	t.Helper()
	if opts.OllamaURL == "" {
		opts.OllamaURL = deadURL
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	r, err := provider.New(context.Background(), st, box, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func workspace(t *testing.T, st store.Store, name string) string {
	t.Helper()
	ws, err := st.Workspaces().GetOrCreate(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ws.ID
}

// ask sends one message to the workspace's adapter of provider name,
// streaming, through the provider's shared chain.
func ask(ctx context.Context, r *provider.Registry, workspaceID, name, model string) (string, error) {
	e, err := r.Lookup(ctx, workspaceID, name)
	if err != nil {
		return "", err
	}
	m, err := e.Adapter(workspaceID)
	if err != nil {
		return "", err
	}
	resp, err := llm.Chain(m, e.Shared()...).Generate(ctx, llm.Request{Model: model, Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}})
	return resp.Message.Text(), err
}

func TestDetectProviders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ollama := llmtest.NewOpenAI(t)
	ollama.SetModels("qwen3", "llama3.2")
	env := map[string]string{"OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant"}
	st := newStore(t)
	ws := workspace(t, st, "default")
	r := newRegistry(t, st, newBox(t), provider.Options{
		Detect:    true,
		Getenv:    func(k string) string { return env[k] },
		OllamaURL: ollama.URL + "/v1",
	})
	got, err := r.Providers(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Info{
		{Name: "anthropic", Type: "anthropic", Origin: provider.OriginDetected, HasKey: true},
		{Name: "ollama", Type: "openai", BaseURL: ollama.URL + "/v1", Origin: provider.OriginDetected, Models: []string{"llama3.2", "qwen3"}},
		{Name: "openai", Type: "openai", Origin: provider.OriginDetected, HasKey: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}
	// The detected Ollama answers.
	ollama.Push(llmtest.Turn{Text: "local answer"})
	if text, err := ask(ctx, r, ws, "ollama", "qwen3"); err != nil || text != "local answer" {
		t.Errorf("the detected Ollama answered %q, %v", text, err)
	}
}

func TestDetectNothing(t *testing.T) {
	t.Parallel()
	var log logBuffer
	st := newStore(t)
	r := newRegistry(t, st, newBox(t), provider.Options{
		Detect: true,
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	})
	got, err := r.Providers(context.Background(), workspace(t, st, "default"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("providers = %+v, want none", got)
	}
	if !strings.Contains(log.String(), "no_model_reachable") {
		t.Errorf("log does not warn no_model_reachable:\n%s", log.String())
	}
}

func TestConfiguredProvidersDisableDetection(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t)
	ollama := llmtest.NewOpenAI(t)
	var log logBuffer
	st := newStore(t)
	r := newRegistry(t, st, newBox(t), provider.Options{
		Providers: []provider.Config{fakeProvider("fake", fake, "k")},
		Detect:    true,
		Getenv:    func(string) string { return "sk-from-env" },
		OllamaURL: ollama.URL + "/v1",
		Logger:    slog.New(slog.NewTextHandler(&log, nil)),
	})
	got, err := r.Providers(context.Background(), workspace(t, st, "default"))
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Info{{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1", Origin: provider.OriginConfig, HasKey: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}
	if n := len(ollama.Requests()); n != 0 {
		t.Errorf("Ollama was probed %d times although providers are configured", n)
	}
	if strings.Contains(log.String(), "no_model_reachable") {
		t.Errorf("log warns no_model_reachable although a provider is configured:\n%s", log.String())
	}
}

func TestBadConfig(t *testing.T) {
	t.Parallel()
	_, err := provider.New(context.Background(), newStore(t), newBox(t), &provider.Options{
		Providers: []provider.Config{{Name: "x", Type: "mistral"}},
	})
	if err == nil || !strings.Contains(err.Error(), `"mistral"`) || !strings.Contains(err.Error(), "openai") {
		t.Errorf("New with type mistral = %v, want an error naming the type and the types that exist", err)
	}
}

func TestPutCredentialConfigProvider(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "ok"})
	st := newStore(t)
	box := newBox(t)
	var events []store.AuditEvent
	r := newRegistry(t, st, box, provider.Options{
		Providers: []provider.Config{fakeProvider("keyless", fake, "")},
		Audit:     func(_ context.Context, e store.AuditEvent) { events = append(events, e) },
	})
	wsA, wsB := workspace(t, st, "a"), workspace(t, st, "b")

	const key = "sk-workspace-a-secret"
	if _, err := r.PutCredential(ctx, wsA, "keyless", key); err != nil {
		t.Fatal(err)
	}
	cred, err := st.Credentials().Get(ctx, wsA, "keyless")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(cred.Ciphertext, []byte(key)) || cred.KeyID != box.KeyID() {
		t.Errorf("stored credential = %q (key id %s), want it sealed by key %s", cred.Ciphertext, cred.KeyID, box.KeyID())
	}
	if want := []store.AuditEvent{{WorkspaceID: wsA, Action: "credential.put", Target: "provider:keyless"}}; !cmp.Equal(events, want) {
		t.Errorf("audit events = %+v, want %+v", events, want)
	}
	infos, err := r.Providers(ctx, wsA)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || !infos[0].HasKey {
		t.Errorf("providers of A = %+v, want keyless with has_key", infos)
	}
	if _, err := ask(ctx, r, wsA, "keyless", "m"); err != nil {
		t.Fatal(err)
	}
	if got := fake.Requests()[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("upstream Authorization = %q, want the stored key", got)
	}

	// A's sealed key copied onto B's row does not open for B.
	if _, err := st.Credentials().Put(ctx, store.Credential{WorkspaceID: wsB, Provider: "keyless", Ciphertext: cred.Ciphertext, KeyID: cred.KeyID}); err != nil {
		t.Fatal(err)
	}
	_, err = ask(ctx, r, wsB, "keyless", "m")
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
	r := newRegistry(t, st, newBox(t), provider.Options{})
	wsA, wsB := workspace(t, st, "a"), workspace(t, st, "b")
	if _, err := r.PutCredential(ctx, wsA, "openai", "sk-1"); err != nil {
		t.Fatal(err)
	}
	// Storing a new key for it again replaces the key.
	if _, err := r.PutCredential(ctx, wsA, "openai", "sk-2"); err != nil {
		t.Fatal(err)
	}
	got, err := r.Providers(ctx, wsA)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Info{{Name: "openai", Type: "openai", Origin: provider.OriginWorkspace, HasKey: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("providers of A (-want +got):\n%s", diff)
	}
	if row, err := st.Providers().GetByName(ctx, wsA, "openai"); err != nil || row.Source != store.SourceAPI {
		t.Errorf("provider row = %+v, %v; want source api", row, err)
	}
	if got, _ := r.Providers(ctx, wsB); len(got) != 0 {
		t.Errorf("workspace B sees A's provider: %+v", got)
	}
	if _, err := r.Lookup(ctx, wsA, "openai"); err != nil {
		t.Errorf("Lookup of the new provider: %v", err)
	}
	if _, err := r.Lookup(ctx, wsB, "openai"); !errors.Is(err, provider.ErrUnknown) {
		t.Errorf("Lookup in B of A's provider = %v, want ErrUnknown", err)
	}

	_, err = r.PutCredential(ctx, wsA, "mistral", "sk-3")
	if !errors.Is(err, provider.ErrUnknown) || !strings.Contains(err.Error(), "mistral") {
		t.Errorf("PutCredential(mistral) = %v, want ErrUnknown naming it", err)
	}
	if _, err := st.Providers().GetByName(ctx, wsA, "mistral"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a provider row was created for an unknown name: %v", err)
	}
}

func TestMeter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The provider pauses in the middle of its answer: that wait is
	// upstream time, not AgentCraft's.
	const pause = 100 * time.Millisecond
	fake := llmtest.NewOpenAI(t,
		llmtest.Turn{Text: "a metered answer", Fault: &llmtest.Fault{AfterChunks: 1, Stall: pause}},
		llmtest.Turn{Text: "unmetered"})
	st := newStore(t)
	ws := workspace(t, st, "default")
	r := newRegistry(t, st, newBox(t), provider.Options{Providers: []provider.Config{fakeProvider("fake", fake, "k")}})
	e, err := r.Lookup(ctx, ws, "fake")
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Adapter(ws)
	if err != nil {
		t.Fatal(err)
	}
	stream := func(ctx context.Context) {
		t.Helper()
		for _, err := range m.Stream(ctx, llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	mctx, meter := provider.WithMeter(ctx)
	start := time.Now()
	stream(mctx)
	elapsed := time.Since(start)
	if up := meter.Upstream(); up < pause || up > elapsed {
		t.Errorf("upstream = %v for a request of %v with a %v pause upstream, want between the pause and the whole request", up, elapsed, pause)
	}
	// A request without a meter is not charged to it.
	before := meter.Upstream()
	stream(ctx)
	if meter.Upstream() != before {
		t.Errorf("a request without the meter changed it from %v to %v", before, meter.Upstream())
	}
}

// TestStoredKeyWireHeaders holds each provider type to the header its API
// documents for API keys: Anthropic's x-api-key (never a bearer token),
// OpenAI's Authorization: Bearer. The key is found from the workspace the
// adapter was built for, with nothing in the context: a queue worker's
// call sends it as an HTTP request's does.
func TestStoredKeyWireHeaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ant := llmtest.NewAnthropic(t, llmtest.Turn{Text: "ok"})
	oai := llmtest.NewOpenAI(t, llmtest.Turn{Text: "ok"})
	st := newStore(t)
	ws := workspace(t, st, "default")
	r := newRegistry(t, st, newBox(t), provider.Options{
		Providers: []provider.Config{
			{Name: "claude", Type: "anthropic", BaseURL: ant.URL, Middleware: noRetry},
			fakeProvider("compat", oai, ""),
		},
	})
	if _, err := r.PutCredential(ctx, ws, "claude", "sk-ant-stored"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PutCredential(ctx, ws, "compat", "sk-compat-stored"); err != nil {
		t.Fatal(err)
	}
	if _, err := ask(ctx, r, ws, "claude", "claude-x"); err != nil {
		t.Fatal(err)
	}
	if _, err := ask(ctx, r, ws, "compat", "m"); err != nil {
		t.Fatal(err)
	}
	ah := ant.Requests()[0].Header
	if got := ah.Get("X-Api-Key"); got != "sk-ant-stored" {
		t.Errorf("anthropic x-api-key = %q, want the stored key", got)
	}
	if got := ah.Get("Authorization"); got != "" {
		t.Errorf("anthropic Authorization = %q, want none (API keys go in x-api-key)", got)
	}
	if got := oai.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-compat-stored" {
		t.Errorf("openai Authorization = %q, want the stored key as a bearer token", got)
	}

	// Deleting the key stops sending it.
	if err := r.DeleteCredential(ctx, ws, "compat"); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteCredential(ctx, ws, "compat"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second DeleteCredential = %v, want store.ErrNotFound", err)
	}
	oai.Push(llmtest.Turn{Text: "ok"})
	if _, err := ask(ctx, r, ws, "compat", "m"); err != nil {
		t.Fatal(err)
	}
	if got := oai.Requests()[1].Header.Get("Authorization"); got != "" {
		t.Errorf("after delete, Authorization = %q, want none", got)
	}
}

// TestStoredKeyBehindConfiguredKey: a configured key wins, and storing one
// for that provider says so instead of being ignored without a word.
func TestStoredKeyBehindConfiguredKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "ok"})
	st := newStore(t)
	ws := workspace(t, st, "default")
	r := newRegistry(t, st, newBox(t), provider.Options{Providers: []provider.Config{fakeProvider("keyed", fake, "sk-configured")}})
	warning, err := r.PutCredential(ctx, ws, "keyed", "sk-stored")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warning, "precedence") || !strings.Contains(warning, "keyed") {
		t.Errorf("warning = %q, want it to say the configured key of keyed takes precedence", warning)
	}
	if _, err := ask(ctx, r, ws, "keyed", "m"); err != nil {
		t.Fatal(err)
	}
	if got := fake.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-configured" {
		t.Errorf("Authorization = %q, want the configured key", got)
	}
}
