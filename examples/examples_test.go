package examples_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/tool/imagegen"
	"github.com/agentcraftlab/agentcraft/tool/imagegen/comfytest"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

const (
	goodPlan     = `{"topic": "Heat pumps for old houses", "audience": "home owners", "outline": ["how they work", "insulation first", "costs"]}`
	goodResearch = "Here is what I found:\n```json\n{\"facts\": [\"Heat pumps move heat rather than make it\", \"A COP of 3 is common\"], \"sources\": [\"energy.gov\"]}\n```"
	goodWriting  = `{"tags": ["heat pumps", "retrofit", "energy"], "x_posts": ["Old house? A heat pump can still work.", "Insulate first, then size the pump.", "COP 3 means 3 kWh of heat per kWh."], "article": "# Heat pumps for old houses\n\nThey move heat..."}`
)

// pkg is one run of the content package.
type pkg struct {
	out     workflow.Outcome
	rec     *workflowtest.Recorder
	res     *workflowtest.Resolver
	comfy   *comfytest.Server // the image back end
	uploads *memUploads       // where the cover is stored
}

func runPackage(t *testing.T, turns ...llmtest.Turn) pkg {
	t.Helper()
	return runPackageWith(t, nil, turns...)
}

// runPackageWith runs the package with a ComfyUI fake of opts.
func runPackageWith(t *testing.T, opts *comfytest.Options, turns ...llmtest.Turn) pkg {
	t.Helper()
	src, err := os.ReadFile("content-package.json")
	if err != nil {
		t.Fatal(err)
	}
	r := pkg{res: workflowtest.NewResolver(t, turns...), comfy: comfytest.New(t, opts), uploads: &memUploads{}, rec: &workflowtest.Recorder{}}
	e := workflowtest.Engine(t, workflow.Services{Agents: r.res, Images: comfyImages(t, r.comfy, r.uploads)})
	p := workflowtest.Parse(t, e, string(src))
	if p.Strategy != workflow.StrategySequential {
		t.Errorf("strategy %s, want sequential (three agents in a chain)", p.Strategy)
	}
	r.out = e.Run(t.Context(), p, workflow.Request{RunID: "r", WorkspaceID: "ws1", Input: "heat pumps", Emit: r.rec.Emit})
	return r
}

// comfyImages is an image generator over the ComfyUI fake running the
// example workflow, storing into ups.
func comfyImages(t *testing.T, srv *comfytest.Server, ups *memUploads) *imagegen.Generator {
	t.Helper()
	graph, err := os.ReadFile("comfyui-txt2img.json")
	if err != nil {
		t.Fatal(err)
	}
	be, err := imagegen.NewComfyUI(srv.Client(), srv.URL, graph, &imagegen.ComfyUIOptions{PollInterval: time.Millisecond})
	if err != nil {
		t.Fatalf("examples/comfyui-txt2img.json: %v", err)
	}
	gen, err := imagegen.New(be, ups, nil)
	if err != nil {
		t.Fatal(err)
	}
	return gen
}

// memUploads is imagegen.Uploads in memory.
type memUploads struct {
	mu    sync.Mutex // guards files
	files map[string]memUpload
}

type memUpload struct {
	workspace, mime string
	data            []byte
}

func (m *memUploads) Save(_ context.Context, ws, name, mime string, data []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string]memUpload{}
	}
	id := fmt.Sprintf("up%d", len(m.files)+1)
	m.files[id] = memUpload{ws, mime, data}
	return id, nil
}

func (m *memUploads) Delete(_ context.Context, _, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, id)
	return nil
}

func contractEvents(rec *workflowtest.Recorder) map[string]string {
	got := map[string]string{}
	for _, ev := range rec.Events {
		if ev.Type == workflow.EventContract {
			got[ev.NodeID] = ev.Status
		}
	}
	return got
}

func TestContentPackageGood(t *testing.T) {
	run := runPackage(t, llmtest.Turn{Text: goodPlan}, llmtest.Turn{Text: goodResearch}, llmtest.Turn{Text: goodWriting})
	out, rec, res := run.out, run.rec, run.res
	if out.Status != workflow.StatusSucceeded {
		t.Fatalf("status %s: %s", out.Status, out.Error)
	}
	pkg, ok := out.Output.(map[string]any)
	if !ok {
		t.Fatalf("output %T %v, want the checked package object", out.Output, out.Output)
	}
	if a, _ := pkg["article"].(string); strings.TrimSpace(a) == "" {
		t.Error("empty article")
	}
	for _, k := range []string{"x_posts", "tags"} {
		if l, _ := pkg[k].([]any); len(l) == 0 {
			t.Errorf("empty %s", k)
		}
	}
	if got := contractEvents(rec); got["plan_gate"] != "ok" || got["research_gate"] != "ok" || got["package_check"] != "ok" {
		t.Errorf("contract results %v", got)
	}
	reqs := res.LLM.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	// The writer got the normalized plan (with the tone default) and the
	// facts extracted from the researcher's fenced JSON.
	body := string(reqs[2].Body)
	for _, want := range []string{"Heat pumps for old houses", "clear and friendly", "600 words", "A COP of 3 is common"} {
		if !strings.Contains(body, want) {
			t.Errorf("writer request lacks %q", want)
		}
	}

	// The cover: drawn by ComfyUI from the checked plan and package, and
	// stored as an upload of the run's workspace.
	var cover map[string]any
	for _, ev := range rec.Events {
		if ev.Type == workflow.EventNodeFinished && ev.NodeID == "cover" {
			cover, _ = ev.Output.(map[string]any)
		}
	}
	images, _ := cover["images"].([]any)
	if len(images) != 1 {
		t.Fatalf("cover output %v, want one image", cover)
	}
	img := images[0].(map[string]any)
	stored, ok := run.uploads.files[img["upload_id"].(string)]
	made := run.comfy.Images()
	if !ok || stored.workspace != "ws1" || stored.mime != "image/png" || len(made) != 1 || !bytes.Equal(stored.data, made[0]) {
		t.Fatalf("cover %v: want ComfyUI's picture stored in ws1", img)
	}
	prompt, _ := cover["prompt"].(string)
	for _, want := range []string{"Heat pumps for old houses", "home owners", "clear and friendly", `"retrofit"`} {
		if !strings.Contains(prompt, want) {
			t.Errorf("cover prompt %q lacks %q", prompt, want)
		}
	}
	graph := run.comfy.Prompts()[0].Graph
	if latent := graph["5"].(map[string]any)["inputs"].(map[string]any); latent["width"] != 1536.0 || latent["height"] != 1024.0 {
		t.Errorf("cover latent %v, want 1536x1024", latent)
	}
}

func TestContentPackageBroken(t *testing.T) {
	cases := []struct {
		name   string
		turns  []llmtest.Turn
		gate   string // node that must fail the contract
		calls  int    // model calls made: none after the gate
		reason string
	}{
		{
			name:   "planning_returns_only_handoff",
			turns:  []llmtest.Turn{{Text: `{"handoff": "research"}`}, {Text: goodResearch}, {Text: goodWriting}},
			gate:   "plan_gate",
			calls:  1,
			reason: "missing required audience, outline, topic",
		},
		{
			name: "writing_echoes_field_names",
			turns: []llmtest.Turn{{Text: goodPlan}, {Text: goodResearch},
				{Text: `{"tags": ["heat pumps"], "x_posts": ["x_posts"], "article": "# Heat pumps\n\nText."}`}},
			gate:   "package_check",
			calls:  3,
			reason: "x_posts",
		},
		{
			name:   "research_without_facts",
			turns:  []llmtest.Turn{{Text: goodPlan}, {Text: `{"sources": ["somewhere"]}`}, {Text: goodWriting}},
			gate:   "research_gate",
			calls:  2,
			reason: "missing required facts",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := runPackage(t, c.turns...)
			out, rec, res := run.out, run.rec, run.res
			if out.Status != workflow.StatusFailedContract {
				t.Fatalf("status %s (%s), want failed_contract", out.Status, out.Error)
			}
			if !strings.Contains(out.Error, `"`+c.gate+`"`) || !strings.Contains(out.Error, c.reason) {
				t.Errorf("error %q does not name gate %s and %q", out.Error, c.gate, c.reason)
			}
			if got := contractEvents(rec)[c.gate]; got != "failed" {
				t.Errorf("contract event of %s: %q", c.gate, got)
			}
			if n := len(res.LLM.Requests()); n != c.calls {
				t.Errorf("%d model calls, want %d: no agent after the gate may run", n, c.calls)
			}
			for _, ev := range rec.Events {
				if ev.Type == workflow.EventNodeFinished && ev.NodeID == "end" {
					t.Error("the end node ran after a failed contract")
				}
			}
			if n := len(run.comfy.Prompts()); n != 0 {
				t.Errorf("%d pictures drawn for a package that failed its contract", n)
			}
		})
	}
}

// TestContentPackageCoverFails: a cover that ComfyUI fails to draw fails
// the run, naming the node and ComfyUI's reason; the package is not
// reported as a success without its picture.
func TestContentPackageCoverFails(t *testing.T) {
	run := runPackageWith(t, &comfytest.Options{Fail: &comfytest.Failure{ClassType: "KSampler", Message: "CUDA out of memory"}},
		llmtest.Turn{Text: goodPlan}, llmtest.Turn{Text: goodResearch}, llmtest.Turn{Text: goodWriting})
	if run.out.Status != workflow.StatusFailed || !strings.Contains(run.out.Error, `node "cover" (image)`) || !strings.Contains(run.out.Error, "CUDA out of memory") {
		t.Fatalf("status %s (%s), want failed at the cover with ComfyUI's reason", run.out.Status, run.out.Error)
	}
	if len(run.uploads.files) != 0 {
		t.Error("an upload was stored for a failed cover")
	}
}
