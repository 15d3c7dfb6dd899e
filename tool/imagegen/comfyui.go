package imagegen

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"time"
)

// Defaults of ComfyUIOptions.
const (
	DefaultPollInterval = time.Second
	DefaultTimeout      = 5 * time.Minute
	// maxPollFailures is how many polls in a row may fail (ComfyUI busy
	// loading a model, a proxy's 502) before the call gives up.
	maxPollFailures = 3
	// maxJSONBody bounds a /prompt or /history answer.
	maxJSONBody = 8 << 20
	// cleanupTimeout bounds taking an abandoned prompt off the queue.
	cleanupTimeout = 5 * time.Second
)

// ComfyUIOptions configure a ComfyUI back end.
type ComfyUIOptions struct {
	// APIKey is sent as a Bearer token, for a ComfyUI behind an
	// authenticating proxy. Default none (ComfyUI itself has no auth).
	APIKey string
	// PollInterval is the wait between polls of /history. Default
	// DefaultPollInterval.
	PollInterval time.Duration
	// Timeout bounds a whole call: queueing, drawing and fetching.
	// Default DefaultTimeout.
	Timeout time.Duration
	// MaxImageBytes bounds one picture. Default DefaultMaxImageBytes.
	MaxImageBytes int64
	// ClientID is sent with every prompt (ComfyUI keys its websocket
	// events by it). Default: random per back end.
	ClientID string
	// Logger receives what a caller cannot act on (a prompt that could
	// not be taken off the queue). Default: discard.
	Logger *slog.Logger
}

// ComfyUI draws by running an operator's workflow on a ComfyUI server.
// Create it with NewComfyUI; it is safe for concurrent use.
type ComfyUI struct {
	client   *http.Client
	base     *url.URL
	graph    *graph
	key      string
	poll     time.Duration
	timeout  time.Duration
	maxImage int64
	clientID string
	log      *slog.Logger
}

var _ Backend = (*ComfyUI)(nil)

// NewComfyUI returns the back end of the ComfyUI server at baseURL (such
// as http://127.0.0.1:8188) running workflow, an API-format graph with
// placeholders (see the package documentation), sending every request
// through client. It fails, naming the problem, when the graph is not
// one.
func NewComfyUI(client *http.Client, baseURL string, workflow []byte, opts *ComfyUIOptions) (*ComfyUI, error) {
	var o ComfyUIOptions
	if opts != nil {
		o = *opts
	}
	if client == nil {
		return nil, errors.New("imagegen: new comfyui: no HTTP client: pass the egress-policy client")
	}
	if baseURL == "" {
		return nil, errors.New("imagegen: new comfyui: no base URL: give the ComfyUI server's, like http://127.0.0.1:8188")
	}
	base, err := parseBaseURL(baseURL)
	if err != nil {
		return nil, fmt.Errorf("imagegen: new comfyui: base URL: %w", err)
	}
	g, err := parseGraph(workflow)
	if err != nil {
		return nil, fmt.Errorf("imagegen: new comfyui: workflow: %w", err)
	}
	if o.PollInterval < 0 || o.Timeout < 0 || o.MaxImageBytes < 0 {
		return nil, errors.New("imagegen: new comfyui: PollInterval, Timeout and MaxImageBytes must be 0 (default) or more")
	}
	if o.ClientID == "" {
		var b [16]byte
		rand.Read(b[:])
		o.ClientID = "agentcraft-" + hex.EncodeToString(b[:])
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &ComfyUI{client: client, base: base, graph: g, key: o.APIKey,
		poll: cmp.Or(o.PollInterval, DefaultPollInterval), timeout: cmp.Or(o.Timeout, DefaultTimeout),
		maxImage: cmp.Or(o.MaxImageBytes, DefaultMaxImageBytes), clientID: o.ClientID, log: o.Logger}, nil
}

// Generate implements Backend: it queues the workflow filled in from req,
// waits for its outputs and fetches their images.
func (c *ComfyUI) Generate(ctx context.Context, req Request) ([]Image, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("imagegen: comfyui: %w", err)
	}
	n := req.count()
	width, height, _ := ParseSize(req.Size)
	uses := c.graph.uses
	switch {
	case req.NegativePrompt != "" && !uses[phNegative]:
		return nil, errors.New("imagegen: comfyui: negative_prompt: the workflow has no {{negative_prompt}} placeholder, so it cannot take one: leave it out, or add the placeholder to the workflow")
	case req.Seed != nil && !uses[phSeed]:
		return nil, errors.New("imagegen: comfyui: seed: the workflow has no {{seed}} placeholder, so it cannot take one: leave it out, or add the placeholder to the workflow")
	case req.Seed != nil && *req.Seed > math.MaxInt64-MaxImages:
		return nil, fmt.Errorf("imagegen: comfyui: seed %d is too large", *req.Seed)
	case width != 0 && !(uses[phWidth] && uses[phHeight]):
		return nil, errors.New("imagegen: comfyui: size: the workflow has no {{width}} and {{height}} placeholders, so its size is fixed: leave size out, or add them to the workflow")
	case n > 1 && !uses[phBatch] && !uses[phSeed]:
		return nil, fmt.Errorf("imagegen: comfyui: n: the workflow has neither {{batch_size}} nor {{seed}}, so it draws one picture per call: ask for 1, or add a placeholder")
	}
	if width == 0 {
		width, height, _ = ParseSize(DefaultSize)
	}
	seed := mrand.Int64N(1 << 50)
	if req.Seed != nil {
		seed = *req.Seed
	}
	// With {{batch_size}} one prompt draws them all; without, one prompt
	// per picture, each with the next seed.
	prompts, batch := n, 1
	if uses[phBatch] {
		prompts, batch = 1, n
	}
	callCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var queued []string
	for i := range prompts {
		g, err := c.graph.fill(map[string]any{phPrompt: req.Prompt, phNegative: req.NegativePrompt,
			phSeed: seed + int64(i), phWidth: width, phHeight: height, phBatch: batch})
		if err != nil {
			return nil, fmt.Errorf("imagegen: comfyui: %w", err)
		}
		id, err := c.queue(callCtx, g)
		if err != nil {
			c.abandon(ctx, queued)
			return nil, c.fail(ctx, callCtx, "", err)
		}
		queued = append(queued, id)
	}
	var images []Image
	for i, id := range queued {
		files, err := c.wait(callCtx, id)
		if err == nil {
			var got []Image
			if got, err = c.fetch(callCtx, id, files); err == nil {
				for j := range got {
					if uses[phSeed] {
						s := seed + int64(i)
						got[j].Seed = &s
					}
				}
				images = append(images, got...)
			}
		}
		if err != nil {
			c.abandon(ctx, queued[i:])
			return nil, c.fail(ctx, callCtx, id, err)
		}
	}
	return images, nil
}

// fail words an error of a call: the call's own timeout says so and
// names the setting, the caller's cancellation stays recognisable.
func (c *ComfyUI) fail(ctx, callCtx context.Context, id string, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("imagegen: comfyui: %w", ctx.Err())
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		what := "queueing the workflow"
		if id != "" {
			what = "prompt " + id
		}
		return fmt.Errorf("imagegen: comfyui: %s did not finish within %v: raise the timeout if the workflow needs longer, or look at ComfyUI's queue: %w", what, c.timeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("imagegen: comfyui: %w", err)
}

// queue posts the workflow and returns its prompt id.
func (c *ComfyUI) queue(ctx context.Context, g json.RawMessage) (string, error) {
	body, err := json.Marshal(struct {
		Prompt   json.RawMessage `json:"prompt"`
		ClientID string          `json:"client_id"`
	}{g, c.clientID})
	if err != nil {
		return "", fmt.Errorf("encode prompt: %w", err)
	}
	status, data, err := c.do(ctx, http.MethodPost, "/prompt", nil, body, maxJSONBody)
	if err != nil {
		return "", err
	}
	return parseQueued(status, data)
}

// wait polls the prompt's history until its entry appears and returns the
// files of its outputs.
func (c *ComfyUI) wait(ctx context.Context, id string) ([]comfyFile, error) {
	t := time.NewTimer(c.poll)
	defer t.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		status, data, err := c.do(ctx, http.MethodGet, "/history/"+url.PathEscape(id), nil, nil, maxJSONBody)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("GET /history/%s: HTTP %d: %s", id, status, snippet(data))
		}
		if err != nil {
			// A busy server or a proxy's hiccup is retried; a run of
			// them is not.
			if failures++; failures > maxPollFailures || ctx.Err() != nil {
				return nil, err
			}
			t.Reset(c.poll)
			continue
		}
		failures = 0
		done, files, err := parseHistory(data, id)
		if err != nil || done {
			return files, err
		}
		t.Reset(c.poll)
	}
}

// fetch downloads the images of a finished prompt.
func (c *ComfyUI) fetch(ctx context.Context, id string, files []comfyFile) ([]Image, error) {
	images := make([]Image, 0, len(files))
	for _, f := range files {
		q := url.Values{"filename": {f.Filename}, "subfolder": {f.Subfolder}, "type": {f.Type}}
		status, data, err := c.do(ctx, http.MethodGet, "/view", q, nil, c.maxImage)
		if err != nil {
			return nil, fmt.Errorf("fetch %s of prompt %s: %w", f.Filename, id, err)
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("fetch %s of prompt %s: GET /view: HTTP %d", f.Filename, id, status)
		}
		mime, err := sniffImage(data)
		if err != nil {
			return nil, fmt.Errorf("fetch %s of prompt %s: %w", f.Filename, id, err)
		}
		images = append(images, Image{Data: data, MIME: mime})
	}
	return images, nil
}

// abandon takes prompts that will not be waited for off ComfyUI's queue,
// after the call's context has ended too: best effort, logged.
func (c *ComfyUI) abandon(ctx context.Context, ids []string) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	body, _ := json.Marshal(map[string][]string{"delete": ids})
	status, _, err := c.do(ctx, http.MethodPost, "/queue", nil, body, maxErrorBody)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("HTTP %d", status)
	}
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "comfyui prompt not dequeued", slog.Any("prompt_ids", ids), slog.String("error", err.Error()))
	}
}

// do sends one request and reads at most limit bytes of a 200 answer
// (of another, what fits in maxErrorBody, for the message).
func (c *ComfyUI) do(ctx context.Context, method, path string, q url.Values, body []byte, limit int64) (int, []byte, error) {
	u := *c.base
	u.Path += path
	u.RawQuery = q.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return resp.StatusCode, data, nil
	}
	data, err := readLimited(resp.Body, limit)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	return resp.StatusCode, data, nil
}
