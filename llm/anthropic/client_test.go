package anthropic_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm/anthropic"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

func TestNewRejectsBadOptions(t *testing.T) {
	for _, opts := range []*anthropic.Options{
		{Timeout: -1},
		{DefaultMaxTokens: -5},
	} {
		if _, err := anthropic.New(opts); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", *opts)
		}
	}
	c, err := anthropic.New(nil)
	if err != nil {
		t.Fatalf("New(nil): %v", err)
	}
	if c.Name() != "anthropic" {
		t.Errorf("default Name() = %q, want anthropic", c.Name())
	}
}

func TestNewDoesNotMutateOptions(t *testing.T) {
	opts := &anthropic.Options{APIKey: "k"}
	before := *opts
	if _, err := anthropic.New(opts); err != nil {
		t.Fatal(err)
	}
	if *opts != before {
		t.Errorf("New changed its options: %+v, was %+v", *opts, before)
	}
}

// TestCredentials checks that the configured key is sent and that the
// process environment is never a source of credentials.
func TestCredentials(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "env-secret")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token")
	srv := llmtest.NewAnthropic(t, llmtest.Turn{Text: "a"}, llmtest.Turn{Text: "b"})

	withKey, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "configured-key"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := withKey.Generate(t.Context(), userRequest("hi")); err != nil {
		t.Fatal(err)
	}
	withoutKey, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := withoutKey.Generate(t.Context(), userRequest("hi")); err != nil {
		t.Fatal(err)
	}

	reqs := srv.Requests()
	if got := credential(reqs[0].Header); !strings.Contains(got, "configured-key") {
		t.Errorf("request with APIKey carried credential %q, want the configured key", got)
	}
	if got := credential(reqs[1].Header); got != "" {
		t.Errorf("request without APIKey carried credential %q, want none (never the environment's)", got)
	}
	for i, r := range reqs {
		if r.Path != "/v1/messages" || r.Method != http.MethodPost {
			t.Errorf("request %d: %s %s, want POST /v1/messages", i, r.Method, r.Path)
		}
		if r.Header.Get("Anthropic-Version") == "" {
			t.Errorf("request %d has no anthropic-version header", i)
		}
	}
}

// credential is the API credential a request carried, in whichever
// header the SDK puts it.
func credential(h http.Header) string {
	return h.Get("X-Api-Key") + h.Get("Authorization")
}
