package middleware

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func ptr[T any](v T) *T { return &v }

func TestSettingsYAML(t *testing.T) {
	const doc = `
rate_limit: {enabled: true, rps: 2.5, burst: 4, queue: 20, timeout: 45s}
retry: {enabled: false, max_retries: 5}
logging: {enabled: true}
`
	var got Settings
	if err := yaml.Unmarshal([]byte(doc), &got); err != nil {
		t.Fatal(err)
	}
	want := Settings{
		RateLimit: RateLimitSettings{Enabled: ptr(true), RPS: 2.5, Burst: 4, Queue: 20, Timeout: 45 * time.Second},
		Retry:     RetrySettings{Enabled: ptr(false), MaxRetries: 5},
		Logging:   LoggingSettings{Enabled: ptr(true)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
}

func TestMerge(t *testing.T) {
	provider := Settings{
		RateLimit: RateLimitSettings{Enabled: ptr(true), RPS: 5, Queue: 10, Timeout: 30 * time.Second},
		Retry:     RetrySettings{MaxRetries: 2},
	}
	agent := Settings{
		RateLimit: RateLimitSettings{RPS: 1, Burst: 2},
		Retry:     RetrySettings{Enabled: ptr(false)},
		Logging:   LoggingSettings{Enabled: ptr(false)},
	}
	want := Settings{
		RateLimit: RateLimitSettings{Enabled: ptr(true), RPS: 1, Burst: 2, Queue: 10, Timeout: 30 * time.Second},
		Retry:     RetrySettings{Enabled: ptr(false), MaxRetries: 2},
		Logging:   LoggingSettings{Enabled: ptr(false)},
	}
	if diff := cmp.Diff(want, Merge(provider, agent)); diff != "" {
		t.Errorf("Merge (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(provider, Merge(provider, Settings{})); diff != "" {
		t.Errorf("Merge with an empty agent changed the provider's settings (-want +got):\n%s", diff)
	}
	// An agent can switch off what its provider switched on.
	off := Merge(provider, Settings{RateLimit: RateLimitSettings{Enabled: ptr(false)}})
	if *off.RateLimit.Enabled || !*provider.RateLimit.Enabled {
		t.Error("agent could not disable the provider's rate limit, or Merge mutated the provider")
	}
}

func TestValidate(t *testing.T) {
	if err := (Settings{}).Validate(); err != nil {
		t.Errorf("empty settings: %v", err)
	}
	bad := Settings{RateLimit: RateLimitSettings{RPS: -1, Queue: -5}, Retry: RetrySettings{MaxRetries: -2}}
	err := bad.Validate()
	for _, field := range []string{"rate_limit.rps", "rate_limit.queue", "retry.max_retries"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate() = %v, want it to name %s", err, field)
		}
	}
}

func TestBuildDefaults(t *testing.T) {
	if n := len(Build(Settings{}, nil)); n != 2 {
		t.Errorf("default Build has %d layers, want retry and logging", n)
	}
	if n := len(Build(Settings{Retry: RetrySettings{Enabled: ptr(false)}, Logging: LoggingSettings{Enabled: ptr(false)}}, nil)); n != 0 {
		t.Errorf("all disabled: %d layers", n)
	}
	if n := len(Build(Settings{RateLimit: RateLimitSettings{Enabled: ptr(true)}}, nil)); n != 3 {
		t.Errorf("rate limit enabled: %d layers, want 3", n)
	}
}

// TestBuildOrder shows the layers' order by behaviour: Logging, inside
// Retry, sees both attempts; RateLimit, outside Retry, admits the request
// once although it reaches the provider twice.
func TestBuildOrder(t *testing.T) {
	logger, buf := newLogger(slog.LevelDebug)
	s := Settings{RateLimit: RateLimitSettings{Enabled: ptr(true), RPS: 0.001, Burst: 1, Queue: -1}}
	fake := newFake(t, failure(503), answer("ok"), answer("unused"))
	m := llm.Chain(fake, Build(s, logger)...)
	if _, err := m.Generate(context.Background(), llm.Request{}); err != nil {
		t.Fatalf("first request: %v", err)
	}
	if fake.calls() != 2 {
		t.Errorf("provider calls = %d, want 2 (one retry)", fake.calls())
	}
	recs := records(t, buf)
	if countMsg(recs, "llm request failed") != 1 || countMsg(recs, "llm request finished") != 1 || countMsg(recs, "llm request retrying") != 1 {
		t.Errorf("records %v: want the failed attempt, the retry and the success", recs)
	}
	if _, err := m.Generate(context.Background(), llm.Request{}); llm.KindOf(err) != llm.KindRateLimit {
		t.Errorf("second request: %v, want the local limit", err)
	}
}
