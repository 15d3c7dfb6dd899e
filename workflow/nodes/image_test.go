package nodes_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/tool/imagegen"
	"github.com/agentcraftlab/agentcraft/tool/imagegen/comfytest"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// fakeImages answers every Generate with one stored picture per image
// asked for (or err) and records the calls.
type fakeImages struct {
	err error

	mu    sync.Mutex // guards calls
	calls []imageCall
}

type imageCall struct {
	Workspace string
	Req       imagegen.Request
}

func (f *fakeImages) Generate(_ context.Context, ws string, req imagegen.Request) (imagegen.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, imageCall{ws, req})
	f.mu.Unlock()
	if f.err != nil {
		return imagegen.Result{}, f.err
	}
	res := imagegen.Result{Prompt: req.Prompt}
	for i := range max(req.N, 1) {
		id := fmt.Sprintf("up%d", i+1)
		res.Images = append(res.Images, imagegen.Stored{UploadID: id, MIME: "image/png", URL: "/api/uploads/" + id})
	}
	return res, nil
}

// imageFlow is start → image (config) → end.
func imageFlow(config string) string {
	return `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"pic","type":"image","config":` + config + `},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"pic"},{"id":"e2","source":"pic","target":"end"}]}`
}

func TestImageNode(t *testing.T) {
	tests := []struct {
		name      string
		svc       *fakeImages // nil: no Images service
		config    string
		input     any
		want      *imageCall
		output    any
		wantError string
	}{
		{
			name: "defaults", svc: &fakeImages{}, config: `{}`, input: "a lighthouse",
			want:   &imageCall{"ws1", imagegen.Request{Prompt: "a lighthouse", N: 1}},
			output: map[string]any{"prompt": "a lighthouse", "images": []any{map[string]any{"upload_id": "up1", "mime": "image/png", "url": "/api/uploads/up1"}}},
		},
		{
			name: "every key", svc: &fakeImages{},
			config: `{"prompt":"Cover art for {{input.topic}}, flat colours","negative_prompt":"text, {{input.avoid}}","size":"1536x1024","n":2,"seed":42}`,
			input:  map[string]any{"topic": "heat pumps", "avoid": "people"},
			want:   &imageCall{"ws1", imagegen.Request{Prompt: "Cover art for heat pumps, flat colours", NegativePrompt: "text, people", Size: "1536x1024", N: 2, Seed: ptrInt64(42)}},
		},
		{
			name: "no back end", config: `{}`, input: "x",
			wantError: `node "pic" (image): image nodes need an image back end, and this server has none: set tools.images in agentcraft.yaml`,
		},
		{
			name: "back end fails", svc: &fakeImages{err: errors.New("imagegen: comfyui: prompt p failed: node 3 (KSampler) raised oom")}, config: `{}`, input: "x",
			wantError: `node "pic" (image): imagegen: comfyui: prompt p failed: node 3 (KSampler) raised oom`,
		},
		{
			name: "empty prompt", svc: &fakeImages{}, config: `{"prompt":"{{input}}"}`, input: "  ",
			wantError: "config.prompt: the prompt is empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var svc workflow.Services
			if tt.svc != nil {
				svc.Images = tt.svc
			}
			e := workflowtest.Engine(t, svc)
			p := workflowtest.Parse(t, e, imageFlow(tt.config))
			if p.Strategy == workflow.StrategyImperative {
				t.Errorf("strategy %s: an image node must not force the imperative engine", p.Strategy)
			}
			out := e.Run(t.Context(), p, workflow.Request{RunID: "r1", WorkspaceID: "ws1", Input: tt.input})
			if tt.wantError != "" {
				if out.Status != workflow.StatusFailed || !strings.Contains(out.Error, tt.wantError) {
					t.Fatalf("status %s, error %q; want failed with %q", out.Status, out.Error, tt.wantError)
				}
				return
			}
			if out.Status != workflow.StatusSucceeded {
				t.Fatalf("status %s: %s", out.Status, out.Error)
			}
			if diff := cmp.Diff([]imageCall{*tt.want}, tt.svc.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if tt.output != nil {
				if diff := cmp.Diff(tt.output, out.Output); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func ptrInt64(v int64) *int64 { return &v }

func TestImageNodeValidation(t *testing.T) {
	tests := []struct{ name, config, path, message string }{
		{"bad size", `{"size":"large"}`, "nodes[1].config.size", `size "large" is not WIDTHxHEIGHT`},
		{"tiny size", `{"size":"8x8"}`, "nodes[1].config.size", "each side must be 64 to 4096"},
		{"too many", `{"n":5}`, "nodes[1].config.n", "5 is above the maximum 4"},
		{"zero", `{"n":0}`, "nodes[1].config.n", "0"},
		{"negative seed", `{"seed":-1}`, "nodes[1].config.seed", "-1"},
		{"unknown key", `{"style":"noir"}`, "nodes[1].config.style", "unknown"},
	}
	e := workflowtest.Engine(t, workflow.Services{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, err := workflow.Parse([]byte(imageFlow(tt.config)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Prepare(def)
			var ie *workflow.InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("Prepare = %v, want an *InvalidError", err)
			}
			for _, p := range ie.Problems {
				if p.Path == tt.path && strings.Contains(p.Message, tt.message) {
					return
				}
			}
			t.Errorf("problems = %+v, want %s: %s", ie.Problems, tt.path, tt.message)
		})
	}
}

// memUploads is imagegen.Uploads in memory.
type memUploads struct {
	mu    sync.Mutex // guards files
	files map[string][]byte
}

func (m *memUploads) Save(_ context.Context, ws, name, mime string, data []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string][]byte{}
	}
	id := fmt.Sprintf("%s/%d-%s", ws, len(m.files)+1, name)
	m.files[id] = data
	return id, nil
}

func (m *memUploads) Delete(_ context.Context, ws, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, id)
	return nil
}

// TestImageNodeComfyUI runs an image step in a workflow against the
// ComfyUI fake: the run's output references stored uploads whose bytes are
// the PNGs ComfyUI made, in the run's workspace.
func TestImageNodeComfyUI(t *testing.T) {
	srv := comfytest.New(t, nil)
	be, err := imagegen.NewComfyUI(srv.Client(), srv.URL, []byte(comfytest.Workflow), &imagegen.ComfyUIOptions{PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ups := &memUploads{}
	gen, err := imagegen.New(be, ups, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := workflowtest.Engine(t, workflow.Services{Images: gen})
	p := workflowtest.Parse(t, e, imageFlow(`{"prompt":"a watercolor of {{input}}","size":"512x768","n":2}`))
	out := e.Run(t.Context(), p, workflow.Request{RunID: "r1", WorkspaceID: "ws9", Input: "a harbour"})
	if out.Status != workflow.StatusSucceeded {
		t.Fatalf("status %s: %s", out.Status, out.Error)
	}
	res, _ := out.Output.(map[string]any)
	images, _ := res["images"].([]any)
	if res["prompt"] != "a watercolor of a harbour" || len(images) != 2 {
		t.Fatalf("output %v, want the prompt and two images", out.Output)
	}
	made := srv.Images()
	for i, im := range images {
		m := im.(map[string]any)
		id, _ := m["upload_id"].(string)
		data, ok := ups.files[id]
		if !ok || !strings.HasPrefix(id, "ws9/") || m["mime"] != "image/png" || m["url"] != "/api/uploads/"+id {
			t.Fatalf("image %d = %v: not a stored upload of ws9", i, m)
		}
		if !bytes.Equal(data, made[i]) {
			t.Errorf("upload %s holds %d bytes, not ComfyUI's image %d", id, len(data), i)
		}
	}
	in := srv.Prompts()[0].Graph["5"].(map[string]any)["inputs"].(map[string]any)
	if in["width"] != 512.0 || in["height"] != 768.0 || in["batch_size"] != 2.0 {
		t.Errorf("latent inputs %v, want 512x768, batch 2", in)
	}
}
