package openai_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/openai"
)

// TestStatusErrors feeds the error bodies of the servers the adapter
// meets; each must keep its status, kind, message and retry delay.
func TestStatusErrors(t *testing.T) {
	jsonHeader := map[string]string{"Content-Type": "application/json"}
	retryAt := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   llm.Error
		// inErr is text the error chain must hold, for bodies whose
		// message is not shown.
		inErr string
	}{{
		name:   "OpenAI",
		status: 401, header: jsonHeader,
		body: `{"error":{"message":"Incorrect API key provided: sk-abc***xyz.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
		want: llm.Error{Kind: llm.KindAuth, Status: 401, Message: "Incorrect API key provided: sk-abc***xyz."},
	}, {
		name:   "Ollama model not pulled",
		status: 404, header: jsonHeader,
		body: `{"error":"model \"llama9\" not found, try pulling it first"}`,
		want: llm.Error{Kind: llm.KindNotFound, Status: 404, Message: `model "llama9" not found, try pulling it first`},
	}, {
		name:   "vLLM",
		status: 400, header: jsonHeader,
		body: `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`,
		want: llm.Error{Kind: llm.KindCaller, Status: 400, Message: "max_tokens is too large"},
	}, {
		name:   "FastAPI detail",
		status: 422, header: jsonHeader,
		body: `{"detail":"messages: field required"}`,
		want: llm.Error{Kind: llm.KindCaller, Status: 422, Message: "messages: field required"},
	}, {
		name:   "proxy page",
		status: 502, header: map[string]string{"Content-Type": "text/html"},
		body:  "<html><body><h1>502 Bad Gateway</h1></body></html>",
		want:  llm.Error{Kind: llm.KindProvider, Status: 502, Message: "Bad Gateway"},
		inErr: "<h1>502 Bad Gateway</h1>",
	}, {
		name:   "empty body",
		status: 500,
		want:   llm.Error{Kind: llm.KindProvider, Status: 500, Message: "Internal Server Error"},
	}, {
		name:   "retry-after date",
		status: 429, header: map[string]string{"Content-Type": "application/json", "Retry-After": retryAt},
		body: `{"error":{"message":"Too many requests","type":"requests","code":"rate_limit_exceeded"}}`,
		want: llm.Error{Kind: llm.KindRateLimit, Status: 429, Message: "Too many requests", RetryAfter: 30 * time.Second},
	}, {
		name:   "retry-after-ms wins",
		status: 429, header: map[string]string{"Retry-After": "20", "Retry-After-Ms": "250"},
		want: llm.Error{Kind: llm.KindRateLimit, Status: 429, Message: "Too Many Requests", RetryAfter: 250 * time.Millisecond},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := wireServer(t, tt.status, tt.header, tt.body)
			req := llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}
			_, genErr := c.Generate(t.Context(), req)
			_, streamErr := llm.Collect(c.Stream(t.Context(), req))
			_, listErr := c.ListModels(t.Context())
			for i, err := range []error{genErr, streamErr, listErr} {
				name := [...]string{"Generate", "Stream", "ListModels"}[i]
				var e *llm.Error
				if !errors.As(err, &e) {
					t.Fatalf("%s error = %v, want an *llm.Error", name, err)
				}
				got := llm.Error{Kind: e.Kind, Status: e.Status, Message: e.Message, RetryAfter: e.RetryAfter}
				// An HTTP date has a one-second resolution.
				approx := cmpopts.EquateApprox(0, float64(2*time.Second))
				if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(llm.Error{}), cmp.Transformer("seconds", func(d time.Duration) float64 { return float64(d) }), approx); diff != "" {
					t.Errorf("%s error %v (-want +got):\n%s", name, e, diff)
				}
				if e.Provider != "local" {
					t.Errorf("%s error provider = %q, want local", name, e.Provider)
				}
				if tt.inErr != "" && !strings.Contains(e.Error(), tt.inErr) {
					t.Errorf("%s error %q does not hold %q", name, e.Error(), tt.inErr)
				}
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	base := ts.URL + "/v1"
	ts.Close() // nothing listens there now, like a stopped Ollama
	c, err := openai.New(&openai.Options{BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListModels(t.Context())
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.KindProvider || e.Status != 0 {
		t.Fatalf("ListModels on a closed port = %v, want a KindProvider *llm.Error without status", err)
	}
	if errors.Is(err, llm.ErrIncompleteStream) {
		t.Errorf("a refused connection is reported as an incomplete stream: %v", err)
	}
}

func TestTimeoutOption(t *testing.T) {
	stalled := llmtest.Turn{Text: "abcdefgh", Fault: &llmtest.Fault{AfterChunks: 1, Stall: time.Minute}}
	srv := llmtest.NewOpenAI(t, stalled, stalled)
	c := newClient(t, srv, &openai.Options{Timeout: 200 * time.Millisecond})
	req := llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}
	start := time.Now()
	_, genErr := c.Generate(t.Context(), req)
	_, streamErr := llm.Collect(c.Stream(t.Context(), req))
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("two calls bounded by a 200ms timeout took %v", d)
	}
	for i, err := range []error{genErr, streamErr} {
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.KindTimeout || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s error = %v, want a KindTimeout *llm.Error wrapping context.DeadlineExceeded", [...]string{"Generate", "Stream"}[i], err)
		}
	}
}

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name  string
		opts  *openai.Options
		field string // the error names it; "" for no error
	}{
		{"nil", nil, ""},
		{"local", &openai.Options{Name: "ollama", BaseURL: "http://localhost:11434/v1"}, ""},
		{"negative timeout", &openai.Options{Timeout: -time.Second}, "Timeout"},
		{"relative URL", &openai.Options{BaseURL: "localhost:11434/v1"}, "BaseURL"},
		{"other scheme", &openai.Options{BaseURL: "ftp://example.com/v1"}, "BaseURL"},
		{"no host", &openai.Options{BaseURL: "http:///v1"}, "BaseURL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := openai.New(tt.opts)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				want := "openai"
				if tt.opts != nil && tt.opts.Name != "" {
					want = tt.opts.Name
				}
				if c.Name() != want {
					t.Errorf("Name() = %q, want %q", c.Name(), want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("New error = %v, want one naming %s", err, tt.field)
			}
		})
	}
}

func TestOptionsRedactAPIKey(t *testing.T) {
	o := openai.Options{Name: "openai", APIKey: "sk-secret-123"}
	for _, s := range []string{o.String(), o.LogValue().String()} {
		if strings.Contains(s, "sk-secret-123") {
			t.Errorf("options print the API key: %s", s)
		}
		if !strings.Contains(s, "[redacted]") {
			t.Errorf("options hide that a key is set: %s", s)
		}
	}
}

func TestListModels(t *testing.T) {
	srv := llmtest.NewOpenAI(t)
	srv.SetModels("llama3.2:latest", "qwen3:8b")
	c := newClient(t, srv, &openai.Options{APIKey: "ollama"})
	ids, err := c.ListModels(t.Context())
	if err != nil {
		t.Fatalf("ListModels: %v", err)
	}
	if diff := cmp.Diff([]string{"llama3.2:latest", "qwen3:8b"}, ids); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Method != http.MethodGet || reqs[0].Path != "/v1/models" || reqs[0].Header.Get("Authorization") != "Bearer ollama" {
		t.Errorf("requests = %+v, want one authorized GET /v1/models", reqs)
	}
}

// TestUnreadableAnswer covers a 200 that is not OpenAI's JSON, as a
// misconfigured base URL pointing at a web page gives.
func TestUnreadableAnswer(t *testing.T) {
	c := wireServer(t, 200, map[string]string{"Content-Type": "application/json"}, "<html>welcome</html>")
	req := llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}
	_, genErr := c.Generate(t.Context(), req)
	_, listErr := c.ListModels(t.Context())
	for i, err := range []error{genErr, listErr} {
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.KindProvider || e.Message != "answer could not be read" {
			t.Errorf("%s error = %v, want KindProvider: answer could not be read", [...]string{"Generate", "ListModels"}[i], err)
		}
		if errors.Is(err, llm.ErrIncompleteStream) {
			t.Errorf("%s error %v claims an incomplete stream", [...]string{"Generate", "ListModels"}[i], err)
		}
	}
}
