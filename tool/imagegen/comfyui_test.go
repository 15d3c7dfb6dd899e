package imagegen_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/tool/imagegen"
	"github.com/agentcraftlab/agentcraft/tool/imagegen/comfytest"
	"github.com/agentcraftlab/agentcraft/tool/imagegen/imagegentest"
)

// fast are options that keep tests quick: polls every millisecond.
func fast(o imagegen.ComfyUIOptions) *imagegen.ComfyUIOptions {
	if o.PollInterval == 0 {
		o.PollInterval = time.Millisecond
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	return &o
}

func newComfy(t *testing.T, srv *comfytest.Server, workflow string, o imagegen.ComfyUIOptions) *imagegen.ComfyUI {
	t.Helper()
	be, err := imagegen.NewComfyUI(srv.Client(), srv.URL, []byte(workflow), fast(o))
	if err != nil {
		t.Fatal(err)
	}
	return be
}

// inputs returns node id's inputs of an accepted prompt's graph.
func inputs(p comfytest.Prompt, id string) map[string]any {
	return p.Graph[id].(map[string]any)["inputs"].(map[string]any)
}

func TestComfyUIQueuePollView(t *testing.T) {
	srv := comfytest.New(t, &comfytest.Options{PollsUntilDone: 3})
	be := newComfy(t, srv, comfytest.Workflow, imagegen.ComfyUIOptions{ClientID: "test-client"})
	images, err := be.Generate(t.Context(), imagegen.Request{Prompt: "a red fox, watercolor", NegativePrompt: "blurry", Size: "768x512", Seed: ptr(int64(42))})
	if err != nil {
		t.Fatal(err)
	}
	want, ok := srv.File("output", "", "agentcraft_00001_.png")
	if !ok {
		t.Fatal("the fake made no agentcraft_00001_.png")
	}
	if len(images) != 1 || !bytes.Equal(images[0].Data, want) || images[0].MIME != "image/png" || images[0].Seed == nil || *images[0].Seed != 42 {
		t.Fatalf("images = %+v, want the fake's PNG drawn with seed 42", images)
	}
	if !bytes.Equal(want, imagegentest.PNG(42)) {
		t.Error("the fake did not draw with the seed sent")
	}
	ps := srv.Prompts()
	if len(ps) != 1 {
		t.Fatalf("%d prompts queued, want 1", len(ps))
	}
	p := ps[0]
	if p.ClientID != "test-client" || p.Polls != 4 {
		t.Errorf("client_id %q, %d polls; want test-client and 4 (3 empty, then done)", p.ClientID, p.Polls)
	}
	// Whole-value placeholders took the value's type; text ones the text.
	got := map[string]any{"text6": inputs(p, "6")["text"], "text7": inputs(p, "7")["text"], "seed": inputs(p, "3")["seed"],
		"width": inputs(p, "5")["width"], "height": inputs(p, "5")["height"], "batch": inputs(p, "5")["batch_size"], "steps": inputs(p, "3")["steps"]}
	wantIn := map[string]any{"text6": "a red fox, watercolor", "text7": "blurry", "seed": 42.0, "width": 768.0, "height": 512.0, "batch": 1.0, "steps": 20.0}
	if diff := cmp.Diff(wantIn, got); diff != "" {
		t.Errorf("filled inputs (-want +got):\n%s", diff)
	}
}

func TestComfyUIPlaceholderInText(t *testing.T) {
	srv := comfytest.New(t, nil)
	wf := strings.Replace(comfytest.Workflow, `"text": "{{prompt}}"`, `"text": "masterpiece, {{ prompt }} ({{seed}})"`, 1)
	be := newComfy(t, srv, wf, imagegen.ComfyUIOptions{})
	if _, err := be.Generate(t.Context(), imagegen.Request{Prompt: "a cat", Seed: ptr(int64(7))}); err != nil {
		t.Fatal(err)
	}
	p := srv.Prompts()[0]
	if got := inputs(p, "6")["text"]; got != "masterpiece, a cat (7)" {
		t.Errorf("text = %q", got)
	}
	// Defaults: DefaultSize, an empty negative prompt.
	if w, h, neg := inputs(p, "5")["width"], inputs(p, "5")["height"], inputs(p, "7")["text"]; w != 1024.0 || h != 1024.0 || neg != "" {
		t.Errorf("defaults: %v x %v, negative %q", w, h, neg)
	}
}

func TestComfyUIBatch(t *testing.T) {
	srv := comfytest.New(t, nil)
	be := newComfy(t, srv, comfytest.Workflow, imagegen.ComfyUIOptions{})
	images, err := be.Generate(t.Context(), imagegen.Request{Prompt: "boats", N: 3, Seed: ptr(int64(100))})
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Prompts()) != 1 || len(images) != 3 {
		t.Fatalf("%d prompts, %d images; want one prompt of batch 3", len(srv.Prompts()), len(images))
	}
	for i, img := range images {
		if !bytes.Equal(img.Data, imagegentest.PNG(100+int64(i))) {
			t.Errorf("image %d is not batch image %d", i, i)
		}
	}
}

// TestComfyUIOnePromptPerImage: without {{batch_size}}, n prompts are
// queued, each with the next seed.
func TestComfyUIOnePromptPerImage(t *testing.T) {
	srv := comfytest.New(t, nil)
	wf := strings.Replace(comfytest.Workflow, `"batch_size": "{{batch_size}}"`, `"batch_size": 1`, 1)
	be := newComfy(t, srv, wf, imagegen.ComfyUIOptions{})
	images, err := be.Generate(t.Context(), imagegen.Request{Prompt: "boats", N: 2, Seed: ptr(int64(5))})
	if err != nil {
		t.Fatal(err)
	}
	ps := srv.Prompts()
	if len(ps) != 2 || len(images) != 2 {
		t.Fatalf("%d prompts, %d images; want 2 and 2", len(ps), len(images))
	}
	for i, p := range ps {
		if s := inputs(p, "3")["seed"]; s != float64(5+i) {
			t.Errorf("prompt %d seed %v, want %d", i, s, 5+i)
		}
		if *images[i].Seed != int64(5+i) || !bytes.Equal(images[i].Data, imagegentest.PNG(int64(5+i))) {
			t.Errorf("image %d: seed %d", i, *images[i].Seed)
		}
	}
}

// TestComfyUIAPIPrefix: ComfyUI serves its routes under /api too.
func TestComfyUIAPIPrefix(t *testing.T) {
	srv := comfytest.New(t, nil)
	be, err := imagegen.NewComfyUI(srv.Client(), srv.URL+"/api/", []byte(comfytest.Workflow), fast(imagegen.ComfyUIOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := be.Generate(t.Context(), imagegen.Request{Prompt: "x"}); err != nil {
		t.Fatal(err)
	}
}

func TestComfyUINodeErrors(t *testing.T) {
	srv := comfytest.New(t, nil)
	wf := strings.Replace(comfytest.Workflow, comfytest.DefaultCheckpoint, "missing.safetensors", 1)
	wf = strings.Replace(wf, `"steps": 20`, `"steps": 0`, 1)
	be := newComfy(t, srv, wf, imagegen.ComfyUIOptions{})
	_, err := be.Generate(t.Context(), imagegen.Request{Prompt: "x"})
	if err == nil {
		t.Fatal("a graph with a missing model was accepted")
	}
	for _, want := range []string{"HTTP 400", "Prompt outputs failed validation",
		"node 3 (KSampler): Value 0 smaller than min of 1: steps",
		"node 4 (CheckpointLoaderSimple): Value not in list: ckpt_name: 'missing.safetensors' not in [" + comfytest.DefaultCheckpoint + "]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if i, j := strings.Index(err.Error(), "node 3"), strings.Index(err.Error(), "node 4"); i > j {
		t.Errorf("node errors out of order: %s", err)
	}
	if n := len(srv.Prompts()); n != 0 {
		t.Errorf("%d prompts queued", n)
	}
}

func TestComfyUIExecutionError(t *testing.T) {
	srv := comfytest.New(t, &comfytest.Options{Fail: &comfytest.Failure{ClassType: "KSampler", ExceptionType: "torch.cuda.OutOfMemoryError", Message: "CUDA out of memory."}})
	be := newComfy(t, srv, comfytest.Workflow, imagegen.ComfyUIOptions{})
	_, err := be.Generate(t.Context(), imagegen.Request{Prompt: "x"})
	if err == nil || !strings.Contains(err.Error(), "failed: node 3 (KSampler) raised torch.cuda.OutOfMemoryError: CUDA out of memory.") {
		t.Fatalf("error = %v, want the execution_error's node and message", err)
	}
}

func TestComfyUITimeout(t *testing.T) {
	srv := comfytest.New(t, &comfytest.Options{PollsUntilDone: -1})
	be := newComfy(t, srv, comfytest.Workflow, imagegen.ComfyUIOptions{Timeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := be.Generate(t.Context(), imagegen.Request{Prompt: "x"})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not finish within 50ms") {
		t.Fatalf("error = %v, want the timeout named", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if ps := srv.Prompts(); len(ps) != 1 || !ps[0].Deleted {
		t.Errorf("prompts %+v: the abandoned prompt must be taken off the queue", ps)
	}
}

func TestComfyUICancel(t *testing.T) {
	srv := comfytest.New(t, &comfytest.Options{PollsUntilDone: -1})
	be := newComfy(t, srv, comfytest.Workflow, imagegen.ComfyUIOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for len(srv.Prompts()) == 0 || srv.Prompts()[0].Polls < 2 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := be.Generate(ctx, imagegen.Request{Prompt: "x"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if ps := srv.Prompts(); len(ps) != 1 || !ps[0].Deleted {
		t.Errorf("prompts %+v: a cancelled prompt must be taken off the queue", ps)
	}
}

// TestComfyUIPollRetries: a few failed polls (a proxy's 502) are retried;
// a run of them is not.
func TestComfyUIPollRetries(t *testing.T) {
	srv := comfytest.New(t, nil)
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var fail atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/history/") && fail.Add(-1) >= 0 {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	be, err := imagegen.NewComfyUI(front.Client(), front.URL, []byte(comfytest.Workflow), fast(imagegen.ComfyUIOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	fail.Store(3)
	if _, err := be.Generate(t.Context(), imagegen.Request{Prompt: "x"}); err != nil {
		t.Fatalf("3 failed polls: %v", err)
	}
	fail.Store(100)
	if _, err := be.Generate(t.Context(), imagegen.Request{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "HTTP 502") {
		t.Fatalf("a run of failed polls: error = %v, want HTTP 502", err)
	}
}

func TestComfyUIRequestNeedsPlaceholder(t *testing.T) {
	srv := comfytest.New(t, nil)
	fixed := strings.NewReplacer(`"{{width}}"`, "512", `"{{height}}"`, "512", `"{{seed}}"`, "1", `"{{negative_prompt}}"`, `"ugly"`, `"{{batch_size}}"`, "1").Replace(comfytest.Workflow)
	be := newComfy(t, srv, fixed, imagegen.ComfyUIOptions{})
	for _, tt := range []struct {
		req  imagegen.Request
		want string
	}{
		{imagegen.Request{Prompt: "x", Size: "512x512"}, "size: the workflow has no {{width}} and {{height}}"},
		{imagegen.Request{Prompt: "x", NegativePrompt: "y"}, "negative_prompt: the workflow has no {{negative_prompt}}"},
		{imagegen.Request{Prompt: "x", Seed: ptr(int64(1))}, "seed: the workflow has no {{seed}}"},
		{imagegen.Request{Prompt: "x", N: 2}, "n: the workflow has neither {{batch_size}} nor {{seed}}"},
	} {
		if _, err := be.Generate(t.Context(), tt.req); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error = %v, want %q", tt.req, err, tt.want)
		}
	}
	if len(srv.Prompts()) != 0 {
		t.Error("a refused request reached ComfyUI")
	}
	// Size "auto" is the default, which a fixed-size graph can serve.
	if _, err := be.Generate(t.Context(), imagegen.Request{Prompt: "x", Size: "auto"}); err != nil {
		t.Errorf("auto size: %v", err)
	}
}

func TestNewComfyUIRefusesGraphs(t *testing.T) {
	tests := []struct{ graph, want string }{
		{`[]`, "not a JSON object of nodes"},
		{`{}`, "the workflow has no nodes"},
		{`{"nodes": [], "links": []}`, "UI format"},
		{`{"1": {"inputs": {}}}`, `node 1 has no "class_type"`},
		{`{"1": {"class_type": "X"}}`, `node 1 has no "inputs" object`},
		{`{"1": "x"}`, "node 1 is not an object"},
		{`{"1": {"class_type": "X", "inputs": {"text": "hi"}}}`, "no {{prompt}} placeholder"},
		{`{"1": {"class_type": "X", "inputs": {"text": "{{prompt}} {{style}}"}}}`, `node 1 input "text": unknown placeholder {{style}}`},
		{`{"1": {"class_type": "X", "inputs": {"text": "{{prompt}} {{ oops"}}}`, "has a {{ that is no placeholder"},
		{`{"1": {"class_type": "X", "inputs": {"text": "{{prompt}}"}}} {}`, "more than one JSON value"},
	}
	for _, tt := range tests {
		_, err := imagegen.NewComfyUI(http.DefaultClient, "http://127.0.0.1:8188", []byte(tt.graph), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("graph %s: error = %v, want %q", tt.graph, err, tt.want)
		}
	}
	if _, err := imagegen.NewComfyUI(http.DefaultClient, "", []byte(comfytest.Workflow), nil); err == nil {
		t.Error("no base URL accepted")
	}
	if _, err := imagegen.NewComfyUI(nil, "http://x", []byte(comfytest.Workflow), nil); err == nil {
		t.Error("no client accepted")
	}
}

// TestComfyUIPreviewOnly: a graph that saves nothing yields its temp
// previews.
func TestComfyUIPreviewOnly(t *testing.T) {
	srv := comfytest.New(t, nil)
	wf := strings.Replace(comfytest.Workflow, `"class_type": "SaveImage", "inputs": {"filename_prefix": "agentcraft", "images": ["8", 0]}`,
		`"class_type": "PreviewImage", "inputs": {"images": ["8", 0]}`, 1)
	be := newComfy(t, srv, wf, imagegen.ComfyUIOptions{})
	images, err := be.Generate(t.Context(), imagegen.Request{Prompt: "x", Seed: ptr(int64(3))})
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 1 || !bytes.Equal(images[0].Data, imagegentest.PNG(3)) {
		t.Fatalf("images = %d, want the preview", len(images))
	}
}
