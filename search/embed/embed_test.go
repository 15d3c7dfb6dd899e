package embed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/search/embed"
)

const testKey = "sk-test-0123456789"

// vecFor is the fake model: a deterministic vector per text, so a test
// knows which vector belongs to which input.
func vecFor(text string, dim int) []float32 {
	h := fnv.New32a()
	h.Write([]byte(text))
	seed := h.Sum32()
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32((seed>>(i%24))&0xff) / 256
	}
	v[0] = float32(len(text))
	return v
}

type fakeRequest struct {
	Auth  string
	Model string
	Input []string
}

// fakeServer serves POST /v1/embeddings the way OpenAI does. Fields set
// before the first request change its answers.
type fakeServer struct {
	*httptest.Server
	dim int
	// reverse lists data last index first, as servers may.
	reverse bool
	// dims, when set, gives the vector length per call (then dim).
	dims []int
	// answer, when set, replaces the normal answer.
	answer func(w http.ResponseWriter, r *http.Request, req fakeRequest)

	mu       sync.Mutex
	requests []fakeRequest // guarded by mu
}

func newFake(t testing.TB, dim int) *fakeServer {
	f := &fakeServer{dim: dim}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, `{"error":{"message":"unknown route"}}`, http.StatusNotFound)
		return
	}
	var body struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	req := fakeRequest{Auth: r.Header.Get("Authorization"), Model: body.Model, Input: body.Input}
	f.mu.Lock()
	call := len(f.requests)
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	if f.answer != nil {
		f.answer(w, r, req)
		return
	}
	dim := f.dim
	if call < len(f.dims) {
		dim = f.dims[call]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(answer(req.Input, dim, f.reverse))
}

func answer(texts []string, dim int, reverse bool) []byte {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	items := make([]item, len(texts))
	for i, text := range texts {
		items[i] = item{"embedding", i, vecFor(text, dim)}
	}
	if reverse {
		slices.Reverse(items)
	}
	b, _ := json.Marshal(map[string]any{"object": "list", "data": items, "model": "m",
		"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	return b
}

func (f *fakeServer) got() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func newClient(t testing.TB, f *fakeServer, o embed.Options) *embed.Client {
	t.Helper()
	o.BaseURL = f.URL + "/v1"
	if o.Model == "" {
		o.Model = "test-embed"
	}
	c, err := embed.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d%s", i, strings.Repeat("!", i%7))
	}
	return out
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		opts *embed.Options
		want string
	}{
		{"nil options", nil, "Model is empty"},
		{"no model", &embed.Options{}, "Model is empty"},
		{"negative dimension", &embed.Options{Model: "m", Dimension: -1}, "Dimension is -1"},
		{"negative batch", &embed.Options{Model: "m", BatchSize: -2}, "BatchSize is -2"},
		{"negative timeout", &embed.Options{Model: "m", Timeout: -time.Second}, "Timeout is -1s"},
		{"bad url", &embed.Options{Model: "m", BaseURL: "localhost:11434"}, "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := embed.New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: error %v, want one containing %q", err, tt.want)
			}
		})
	}
	c, err := embed.New(&embed.Options{Model: "m", Dimension: 768})
	if err != nil {
		t.Fatal(err)
	}
	if c.Dimension() != 768 {
		t.Errorf("Dimension() = %d, want the configured 768", c.Dimension())
	}
}

func TestEmbedBatchesInInputOrder(t *testing.T) {
	f := newFake(t, 4)
	f.reverse = true // order must come from "index", not array position
	c := newClient(t, f, embed.Options{BatchSize: 64, Model: "nomic-embed-text"})
	in := texts(150)
	got, err := c.Embed(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]float32, len(in))
	for i, text := range in {
		want[i] = vecFor(text, 4)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	reqs := f.got()
	var sizes []int
	var sent []string
	for _, r := range reqs {
		sizes = append(sizes, len(r.Input))
		sent = append(sent, r.Input...)
		if r.Model != "nomic-embed-text" {
			t.Errorf("request model %q, want nomic-embed-text", r.Model)
		}
	}
	if diff := cmp.Diff([]int{64, 64, 22}, sizes); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(in, sent); diff != "" {
		t.Errorf("texts sent (-want +got):\n%s", diff)
	}
}

func TestDefaultBatchSize(t *testing.T) {
	f := newFake(t, 2)
	c := newClient(t, f, embed.Options{})
	if _, err := c.Embed(t.Context(), texts(embed.DefaultBatchSize+1)); err != nil {
		t.Fatal(err)
	}
	if n := len(f.got()); n != 2 {
		t.Errorf("%d texts took %d requests, want 2 with the default batch of %d", embed.DefaultBatchSize+1, n, embed.DefaultBatchSize)
	}
	got, err := c.Embed(t.Context(), nil)
	if err != nil || len(got) != 0 {
		t.Errorf("Embed(nil) = %v, %v; want no vectors and no error", got, err)
	}
	if n := len(f.got()); n != 2 {
		t.Errorf("Embed(nil) sent a request")
	}
}

func TestAuthHeader(t *testing.T) {
	for _, tt := range []struct{ key, want string }{{testKey, "Bearer " + testKey}, {"", ""}} {
		f := newFake(t, 2)
		c := newClient(t, f, embed.Options{APIKey: tt.key})
		if _, err := c.Embed(t.Context(), []string{"x"}); err != nil {
			t.Fatal(err)
		}
		if got := f.got()[0].Auth; got != tt.want {
			t.Errorf("key %q: Authorization %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		header      map[string]string
		body        string
		kind        llm.Kind
		message     string
		retryAfter  time.Duration
		errContains string
	}{
		{name: "openai shape", status: 401, body: `{"error":{"message":"Incorrect API key provided: sk-te***789.","type":"invalid_request_error","code":"invalid_api_key"}}`,
			kind: llm.KindAuth, message: "Incorrect API key provided: sk-te***789."},
		{name: "ollama shape", status: 404, body: `{"error":"model \"nomic-embed-text\" not found, try pulling it first"}`,
			kind: llm.KindNotFound, message: `model "nomic-embed-text" not found, try pulling it first`},
		{name: "vllm shape", status: 400, body: `{"object":"error","message":"This model's maximum context length is 512 tokens.","type":"BadRequestError","code":400}`,
			kind: llm.KindCaller, message: "This model's maximum context length is 512 tokens."},
		{name: "rate limit", status: 429, header: map[string]string{"Retry-After": "2"}, body: `{"error":{"message":"Rate limit reached"}}`,
			kind: llm.KindRateLimit, message: "Rate limit reached", retryAfter: 2 * time.Second},
		{name: "proxy page", status: 502, body: "<html>bad gateway</html>",
			kind: llm.KindProvider, message: "Bad Gateway", errContains: "<html>bad gateway</html>"},
		{name: "key echoed", status: 403, body: `{"error":"forbidden for Bearer ` + testKey + `"}`,
			kind: llm.KindAuth, message: "forbidden for Bearer [redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, 2)
			f.answer = func(w http.ResponseWriter, _ *http.Request, _ fakeRequest) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}
			c := newClient(t, f, embed.Options{APIKey: testKey})
			_, err := c.Embed(t.Context(), []string{"x"})
			var le *llm.Error
			if !errors.As(err, &le) {
				t.Fatalf("error %v (%T), want *llm.Error", err, err)
			}
			got := struct {
				Kind       llm.Kind
				Status     int
				Message    string
				RetryAfter time.Duration
			}{le.Kind, le.Status, le.Message, le.RetryAfter}
			want := got
			want.Kind, want.Status, want.Message, want.RetryAfter = tt.kind, tt.status, tt.message, tt.retryAfter
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error fields (-want +got):\n%s", diff)
			}
			s := err.Error()
			// Error's text passes through llm.RedactSecrets: the masked
			// key echo (sk-te***789) does not survive in it.
			if !strings.Contains(s, fmt.Sprint(tt.status)) || !strings.Contains(s, llm.RedactSecrets(tt.message)) || !strings.Contains(s, tt.errContains) {
				t.Errorf("error text %q lacks the status %d, message %q or %q", s, tt.status, tt.message, tt.errContains)
			}
			if strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, le), testKey) {
				t.Errorf("error shows the API key: %v", err)
			}
		})
	}
}

func TestBadAnswers(t *testing.T) {
	item := func(i int, v ...float32) map[string]any { return map[string]any{"index": i, "embedding": v} }
	tests := []struct {
		name string
		in   []string
		data any
		want string
	}{
		{"too few", []string{"a", "b"}, []any{item(0, 1, 2)}, "1 embeddings for 2 texts"},
		{"index out of range", []string{"a"}, []any{item(1, 1, 2)}, "index 1 for 1 texts"},
		{"index twice", []string{"a", "b"}, []any{item(0, 1, 2), item(0, 1, 2)}, "index 0 twice"},
		{"empty vector", []string{"a"}, []any{item(0)}, "empty embedding"},
		{"ragged", []string{"a", "b"}, []any{item(0, 1, 2), item(1, 1, 2, 3)}, "embedding 1 has length 3"},
		{"not json", []string{"a"}, nil, "could not be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, 2)
			f.answer = func(w http.ResponseWriter, _ *http.Request, _ fakeRequest) {
				if tt.data == nil {
					w.Write([]byte(`{"data":[{"index":0,"embedding":[1,`))
					return
				}
				json.NewEncoder(w).Encode(map[string]any{"data": tt.data})
			}
			c := newClient(t, f, embed.Options{})
			_, err := c.Embed(t.Context(), tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) || llm.KindOf(err) != llm.KindProvider {
				t.Errorf("error %v (kind %q), want a provider error containing %q", err, llm.KindOf(err), tt.want)
			}
			if c.Dimension() != 0 {
				t.Errorf("Dimension() = %d after a rejected answer, want 0", c.Dimension())
			}
		})
	}
}

func TestDimensionLearnedThenEnforced(t *testing.T) {
	f := newFake(t, 3)
	f.dims = []int{3, 3, 5}
	c := newClient(t, f, embed.Options{BatchSize: 2})
	if c.Dimension() != 0 {
		t.Fatalf("Dimension() = %d before any answer, want 0", c.Dimension())
	}
	if _, err := c.Embed(t.Context(), []string{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	if c.Dimension() != 3 {
		t.Errorf("Dimension() = %d after the first answer, want 3", c.Dimension())
	}
	_, err := c.Embed(t.Context(), []string{"d"})
	if err == nil || !strings.Contains(err.Error(), "dimension mismatch") || !strings.Contains(err.Error(), "length 5, want 3") {
		t.Errorf("answer with length 5 after 3: error %v, want a dimension mismatch", err)
	}
	if c.Dimension() != 3 {
		t.Errorf("Dimension() = %d after a mismatch, want it to stay 3", c.Dimension())
	}

	// A configured dimension is checked from the first answer.
	f2 := newFake(t, 4)
	c2 := newClient(t, f2, embed.Options{Dimension: 3})
	if _, err := c2.Embed(t.Context(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "length 4, want 3") {
		t.Errorf("configured 3, answer 4: error %v, want a dimension mismatch", err)
	}
}

// TestLaterBatchFails checks that an error in the second batch names the
// texts it covers and returns no partial result.
func TestLaterBatchFails(t *testing.T) {
	f := newFake(t, 2)
	f.answer = func(w http.ResponseWriter, _ *http.Request, req fakeRequest) {
		if req.Input[0] == "c" {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"message":"overloaded"}}`))
			return
		}
		w.Write(answer(req.Input, 2, false))
	}
	c := newClient(t, f, embed.Options{BatchSize: 2})
	got, err := c.Embed(t.Context(), []string{"a", "b", "c", "d"})
	if err == nil || got != nil || !strings.Contains(err.Error(), "texts 2 to 3") || llm.KindOf(err) != llm.KindProvider {
		t.Errorf("Embed = %v, %v; want no vectors and a provider error for texts 2 to 3", got, err)
	}
}

func TestCancellation(t *testing.T) {
	stalled := make(chan struct{})
	f := newFake(t, 2)
	f.answer = func(w http.ResponseWriter, r *http.Request, _ fakeRequest) {
		stalled <- struct{}{}
		<-r.Context().Done()
	}

	t.Run("caller cancels", func(t *testing.T) {
		c := newClient(t, f, embed.Options{})
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-stalled
			cancel()
		}()
		_, err := c.Embed(ctx, []string{"a"})
		if !errors.Is(err, context.Canceled) || llm.KindOf(err) != llm.KindCanceled {
			t.Errorf("error %v (kind %q), want context.Canceled of kind canceled", err, llm.KindOf(err))
		}
	})
	t.Run("timeout option", func(t *testing.T) {
		c := newClient(t, f, embed.Options{Timeout: 50 * time.Millisecond})
		go func() { <-stalled }()
		start := time.Now()
		_, err := c.Embed(t.Context(), []string{"a"})
		if !errors.Is(err, context.DeadlineExceeded) || llm.KindOf(err) != llm.KindTimeout {
			t.Errorf("error %v (kind %q), want a deadline of kind timeout", err, llm.KindOf(err))
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Embed took %v with a 50ms timeout", d)
		}
	})
}

func TestOptionsHideKey(t *testing.T) {
	o := embed.Options{APIKey: testKey, Model: "m"}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("embedder", "options", o)
	for _, s := range []string{fmt.Sprint(o), fmt.Sprintf("%+v", o), buf.String()} {
		if strings.Contains(s, testKey) {
			t.Errorf("options print the key: %s", s)
		}
	}
}

// BenchmarkEmbed256 embeds 256 texts (four batches of 64) of 1536-dim
// vectors against a fake answering from pre-encoded bodies, so the numbers
// are the client's: this package's decoder against openai-go's
// Embeddings.New doing the same job (float64 answers converted to float32).
func BenchmarkEmbed256(b *testing.B) {
	const dim = 1536
	in := texts(256)
	bodies := map[string][]byte{}
	for i := 0; i < len(in); i += 64 {
		bodies[in[i]] = answer(in[i:i+64], dim, false)
	}
	f := newFake(b, dim)
	f.answer = func(w http.ResponseWriter, _ *http.Request, req fakeRequest) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(bodies[req.Input[0]])
	}
	ctx := context.Background()

	b.Run("embed", func(b *testing.B) {
		c := newClient(b, f, embed.Options{APIKey: testKey, HTTPClient: f.Client()})
		b.ReportAllocs()
		for b.Loop() {
			vs, err := c.Embed(ctx, in)
			if err != nil || len(vs) != len(in) {
				b.Fatal(err)
			}
		}
	})
	b.Run("openai-go", func(b *testing.B) {
		oc := openai.NewClient(option.WithBaseURL(f.URL+"/v1"), option.WithAPIKey(testKey),
			option.WithHTTPClient(f.Client()), option.WithMaxRetries(0))
		b.ReportAllocs()
		for b.Loop() {
			out := make([][]float32, 0, len(in))
			for i := 0; i < len(in); i += 64 {
				res, err := oc.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "test-embed",
					Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: in[i : i+64]}})
				if err != nil {
					b.Fatal(err)
				}
				for _, d := range res.Data {
					v := make([]float32, len(d.Embedding))
					for j, x := range d.Embedding {
						v[j] = float32(x)
					}
					out = append(out, v)
				}
			}
			if len(out) != len(in) {
				b.Fatal(len(out))
			}
		}
	})
}
