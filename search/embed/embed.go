// Package embed is a search.Embedder over an OpenAI-compatible embeddings
// endpoint (POST {BaseURL}/embeddings), as served by OpenAI, Ollama
// (http://localhost:11434/v1) and vLLM:
//
//	emb, err := embed.New(&embed.Options{APIKey: key, Model: "text-embedding-3-small", Dimension: 1536})
//	eng, err := memory.New(&memory.Options{Embedder: emb})
//
// The client speaks the one endpoint with net/http and encoding/json
// rather than through openai-go: the request is two fields and the answer
// one array, while the SDK decodes through its own reflection layer that
// keeps every field's raw JSON, returns float64 vectors that would be
// converted again, and brings its own retries. BenchmarkEmbed256 runs both
// against the same fake (256 texts, 1536 dimensions, four requests): this
// client takes 73 ms, 14 MB and 4.2k allocations; openai-go 134 ms, 119 MB
// and 795k allocations. Errors are *llm.Error values with
// the provider's status and message, so callers and retry policy classify
// them as they do chat errors.
//
// Inputs larger than BatchSize are split into several requests, sent one
// after another (a concurrent fan-out would only meet the provider's rate
// limit sooner). Vectors are returned in input order, placed by the
// answer's "index" field rather than its array order.
//
// Dimension: with Options.Dimension set, every vector is checked against
// it and Dimension() reports it from the start. With 0 the client learns
// the length from the first successful answer; Dimension() is 0 until then
// and every later answer must match. The search engines accept 0 when they
// are built and check each vector after Embed. Learning is allowed because local servers
// (Ollama, vLLM) make the length a property of whichever model is loaded;
// setting it is recommended because a model swapped behind the same name
// is then caught at once instead of on the first mismatch.
package embed

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/search"
)

// Defaults of Options.
const (
	DefaultBaseURL   = "https://api.openai.com/v1"
	DefaultBatchSize = 64
)

// Options configure a Client. Model is required.
type Options struct {
	// BaseURL is the API root, /v1 included, e.g. http://localhost:11434/v1
	// for Ollama. Default https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token. Empty sends none, as local servers
	// expect. It never appears in errors or logs.
	APIKey string
	// Model names the embedding model. Required.
	Model string
	// Dimension is the length of every vector. Default 0: learned from the
	// first answer (see the package documentation).
	Dimension int
	// HTTPClient sends the requests. Default http.DefaultClient.
	HTTPClient *http.Client
	// BatchSize is the most texts sent in one request. Default 64.
	BatchSize int
	// Timeout bounds one request (one batch), from sending it to reading
	// the answer. Default 0: only ctx bounds it.
	Timeout time.Duration
}

// LogValue logs the options without the API key.
func (o Options) LogValue() slog.Value {
	key := ""
	if o.APIKey != "" {
		key = "[redacted]"
	}
	return slog.GroupValue(
		slog.String("base_url", o.BaseURL),
		slog.String("api_key", key),
		slog.String("model", o.Model),
		slog.Int("dimension", o.Dimension),
		slog.Int("batch_size", o.BatchSize),
		slog.Duration("timeout", o.Timeout),
	)
}

// String formats the options without the API key, for %v.
func (o Options) String() string { return o.LogValue().String() }

// Client is a search.Embedder; it is safe for concurrent use.
type Client struct {
	url     string
	apiKey  string
	model   string
	http    *http.Client
	batch   int
	timeout time.Duration
	// dim is the vector length: Options.Dimension, or 0 until the first
	// answer sets it once with CompareAndSwap.
	dim atomic.Int64
}

var _ search.Embedder = (*Client)(nil)

// New returns a Client configured by opts.
func New(opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Model == "" {
		return nil, errors.New("embed: new client: Model is empty; name the embedding model, e.g. text-embedding-3-small or nomic-embed-text")
	}
	if o.Dimension < 0 {
		return nil, fmt.Errorf("embed: new client: Dimension is %d; use the model's vector length or 0 to learn it", o.Dimension)
	}
	if o.BatchSize < 0 {
		return nil, fmt.Errorf("embed: new client: BatchSize is %d; use a positive number or 0 for %d", o.BatchSize, DefaultBatchSize)
	}
	if o.Timeout < 0 {
		return nil, fmt.Errorf("embed: new client: Timeout is %v; use 0 for none or a positive duration", o.Timeout)
	}
	base := cmp.Or(o.BaseURL, DefaultBaseURL)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("embed: new client: BaseURL %q is not an http(s) URL; use e.g. %s or http://localhost:11434/v1", base, DefaultBaseURL)
	}
	c := &Client{
		url:     strings.TrimSuffix(base, "/") + "/embeddings",
		apiKey:  o.APIKey,
		model:   o.Model,
		http:    cmp.Or(o.HTTPClient, http.DefaultClient),
		batch:   cmp.Or(o.BatchSize, DefaultBatchSize),
		timeout: o.Timeout,
	}
	c.dim.Store(int64(o.Dimension))
	return c, nil
}

// Dimension implements search.Embedder: Options.Dimension, or the learned
// length, or 0 before the first answer when it is to be learned.
func (c *Client) Dimension() int { return int(c.dim.Load()) }

// Embed implements search.Embedder. It returns one vector per text, in
// order; an empty input sends no request.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.batch {
		vs, err := c.embedBatch(ctx, texts[start:min(start+c.batch, len(texts))])
		if err != nil {
			if start > 0 {
				return nil, fmt.Errorf("embed: texts %d to %d: %w", start, min(start+c.batch, len(texts))-1, err)
			}
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

type request struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// maxErrorBody caps how much of an error answer is read.
const maxErrorBody = 64 << 10

func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	body, err := json.Marshal(request{Model: c.model, Input: texts})
	if err != nil {
		return nil, fmt.Errorf("embed: encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embed: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, "post embeddings", err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		return nil, c.statusError(res)
	}
	var r response
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		if ctx.Err() != nil {
			return nil, c.transportError(ctx, "read embeddings", err)
		}
		return nil, &llm.Error{Kind: llm.KindProvider, Status: res.StatusCode, Message: "embeddings answer could not be read",
			Err: fmt.Errorf("embed: decode embeddings: %w", err)}
	}
	return c.order(texts, &r)
}

// order places the answer's vectors by their index and checks their count
// and length.
func (c *Client) order(texts []string, r *response) ([][]float32, error) {
	bad := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		return &llm.Error{Kind: llm.KindProvider, Message: msg, Err: errors.New("embed: " + msg)}
	}
	if len(r.Data) != len(texts) {
		return nil, bad("answer holds %d embeddings for %d texts", len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(texts) {
			return nil, bad("answer holds an embedding with index %d for %d texts", d.Index, len(texts))
		}
		if out[d.Index] != nil {
			return nil, bad("answer holds index %d twice", d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, bad("answer holds an empty embedding at index %d", d.Index)
		}
		out[d.Index] = d.Embedding
	}
	n := int64(len(out[0]))
	for i, v := range out {
		if int64(len(v)) != n {
			return nil, bad("embedding %d has length %d, embedding 0 has %d", i, len(v), n)
		}
	}
	if c.dim.CompareAndSwap(0, n) {
		return out, nil
	}
	if want := c.dim.Load(); want != n {
		return nil, bad("dimension mismatch: model %q returned vectors of length %d, want %d", c.model, n, want)
	}
	return out, nil
}

// transportError maps a failure to send or read: the caller's cancellation
// or deadline, the client's own timeout, or a broken connection. It
// classifies err before redacting it, since redaction drops its chain.
func (c *Client) transportError(ctx context.Context, op string, err error) error {
	var ne net.Error
	timeout := errors.As(err, &ne) && ne.Timeout()
	ctxErr := ctx.Err()
	isCtx := ctxErr != nil && errors.Is(err, ctxErr)
	err = c.redact(err)
	switch {
	case ctxErr != nil:
		kind, msg := llm.KindCanceled, "request canceled"
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			kind, msg = llm.KindTimeout, "request timed out"
		}
		wrapped := fmt.Errorf("embed: %s: %w", op, err)
		if !isCtx || !errors.Is(err, ctxErr) {
			wrapped = fmt.Errorf("embed: %s: %w: %w", op, ctxErr, err)
		}
		return &llm.Error{Kind: kind, Message: msg, Err: wrapped}
	case timeout:
		return &llm.Error{Kind: llm.KindTimeout, Message: "request timed out", Err: fmt.Errorf("embed: %s: %w", op, err)}
	}
	return &llm.Error{Kind: llm.KindProvider, Message: "request failed", Err: fmt.Errorf("embed: %s: %w", op, err)}
}

// statusError maps an HTTP error status, keeping the server's message in
// OpenAI's {"error":{"message"}}, Ollama's {"error":"..."} or vLLM's
// top-level {"message"} shape.
func (c *Client) statusError(res *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	msg := c.redactString(errorMessage(body))
	cause := fmt.Errorf("embed: post embeddings: status %d", res.StatusCode)
	if msg == "" {
		msg = http.StatusText(res.StatusCode)
		if s := c.redactString(snippet(body)); s != "" {
			cause = fmt.Errorf("embed: post embeddings: status %d: body %q", res.StatusCode, s)
		}
	}
	return &llm.Error{
		Kind:       llm.KindForStatus(res.StatusCode),
		Status:     res.StatusCode,
		RetryAfter: llm.RetryAfter(res.Header, time.Now()),
		Message:    msg,
		Err:        cause,
	}
}

func errorMessage(body []byte) string {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &env) != nil {
		return ""
	}
	if len(env.Error) > 0 {
		var s string
		if json.Unmarshal(env.Error, &s) == nil {
			return s
		}
		var d struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(env.Error, &d) == nil && d.Message != "" {
			return d.Message
		}
	}
	return env.Message
}

// snippet is the start of a body that is not a JSON error (a proxy's page).
func snippet(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// redactString removes the API key from text a server sent back: a
// misconfigured gateway may echo the Authorization header in its error.
func (c *Client) redactString(s string) string {
	if c.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.apiKey, "[redacted]")
}

// redact does the same for an error from net/http, whose text includes the
// URL (a key put in BaseURL's query would show there). A redacted error
// keeps no chain: its causes would print the key.
func (c *Client) redact(err error) error {
	if c.apiKey == "" || !strings.Contains(err.Error(), c.apiKey) {
		return err
	}
	return errors.New(c.redactString(err.Error()))
}
