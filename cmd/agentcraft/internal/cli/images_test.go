package cli

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool/imagegen/comfytest"
	"github.com/agentcraftlab/agentcraft/tool/imagegen/imagegentest"
)

// storedUpload reads upload id of the default workspace from the
// database of the test's directory.
func storedUpload(t *testing.T, id string) store.Upload {
	t.Helper()
	u, err := parseDatabase("sqlite://" + filepath.Join(".", "agentcraft.db"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := openDatabase(t.Context(), u, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	ws, err := o.st.Workspaces().GetByName(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	up, err := o.st.Uploads().Get(t.Context(), ws.ID, id)
	if err != nil {
		t.Fatalf("upload %s: %v", id, err)
	}
	return up
}

const imageFlow = `
name: pictures
nodes:
  - {id: start, type: start}
  - {id: pic, type: image, config: {prompt: "A watercolor of {{input}}", size: 512x512}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: pic}
  - {id: e2, source: pic, target: end}
`

// TestRunImageNodeComfyUI: with tools.images on a ComfyUI (on loopback,
// which egress.allow does not list: the back end's own host is allowed),
// an image node's picture is stored as an upload of the workspace.
func TestRunImageNodeComfyUI(t *testing.T) {
	srv := comfytest.New(t, nil)
	images := "tools:\n  images:\n    backend: comfyui\n    base_url: \"" + srv.URL + "\"\n    workflow: txt2img.json\n    poll_interval: 5ms\n"
	inTempDir(t, images, map[string]string{"wf.yaml": imageFlow, "txt2img.json": comfytest.Workflow})
	code, out, errOut := run(t, "run", "wf.yaml", "--input", "a harbour at dusk")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	var res struct {
		Prompt string
		Images []struct {
			UploadID  string `json:"upload_id"`
			MIME, URL string
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	if res.Prompt != "A watercolor of a harbour at dusk" || len(res.Images) != 1 || res.Images[0].URL != "/api/uploads/"+res.Images[0].UploadID {
		t.Fatalf("output %s", out)
	}
	up := storedUpload(t, res.Images[0].UploadID)
	if made := srv.Images(); len(made) != 1 || !bytes.Equal(up.Data, made[0]) || up.ContentType != "image/png" {
		t.Errorf("upload holds %d bytes of %s, want ComfyUI's PNG", len(up.Data), up.ContentType)
	}
	if d := up.ExpiresAt.Sub(up.CreatedAt); d < 167*time.Hour {
		t.Errorf("upload kept %v, want the default week", d)
	}
}

func TestRunImageNodeWithoutBackend(t *testing.T) {
	inTempDir(t, "", map[string]string{"wf.yaml": imageFlow})
	code, _, errOut := run(t, "run", "wf.yaml", "--input", "x")
	if code == 0 || !strings.Contains(errOut, "set tools.images in agentcraft.yaml") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

func TestImagesBadWorkflowFailsStart(t *testing.T) {
	images := "tools:\n  images: {backend: comfyui, base_url: \"http://127.0.0.1:1\", workflow: txt2img.json}\n"
	inTempDir(t, images, map[string]string{"wf.yaml": imageFlow, "txt2img.json": `{"1": {"class_type": "X", "inputs": {"text": "no placeholder"}}}`})
	code, _, errOut := run(t, "run", "wf.yaml", "--input", "x")
	if code == 0 || !strings.Contains(errOut, "tools.images: imagegen: new comfyui: workflow: the workflow has no {{prompt}} placeholder") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

// TestGenerateImageToolInWorkflowAgent: an agent that names
// generate_image gets it bound to the run's workspace: the picture the
// OpenAI-compatible back end draws lands in that workspace's uploads, and
// the model reads its upload id.
func TestGenerateImageToolInWorkflowAgent(t *testing.T) {
	fake := imagegentest.NewOpenAI(t, nil)
	model := llmtest.NewOpenAI(t,
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "generate_image", Arguments: `{"prompt":"a red kite"}`}}},
		llmtest.Turn{Text: "Here is your kite."})
	wf := `
name: draw
nodes:
  - {id: start, type: start}
  - {id: a, type: agent, config: {model: fake/m, instructions: "Draw what is asked.", tools: [generate_image]}}
  - {id: end, type: end}
edges:
  - {id: e1, source: start, target: a}
  - {id: e2, source: a, target: end}
`
	cfg := "providers:\n  - {name: fake, type: openai, base_url: \"" + model.URL + "/v1\", api_key: test}\n" +
		"tools:\n  images: {backend: openai, base_url: \"" + fake.BaseURL() + "\", api_key: " + imagegentest.Key + "}\n"
	inTempDir(t, cfg, map[string]string{"wf.yaml": wf})
	code, out, errOut := run(t, "run", "wf.yaml", "--input", "a kite please")
	if code != 0 || out != "Here is your kite.\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	var second struct {
		Messages []struct {
			Role    string
			Content any
		}
	}
	json.Unmarshal(reqs[1].Body, &second)
	last := second.Messages[len(second.Messages)-1]
	content, _ := last.Content.(string)
	var res struct {
		Images []struct {
			UploadID string `json:"upload_id"`
		}
	}
	if last.Role != "tool" || json.Unmarshal([]byte(content), &res) != nil || len(res.Images) != 1 {
		t.Fatalf("the model read %+v, want the tool's result with one image", last)
	}
	up := storedUpload(t, res.Images[0].UploadID)
	if !bytes.Equal(up.Data, imagegentest.PNG(1)) {
		t.Errorf("upload holds %d bytes, want the fake's PNG", len(up.Data))
	}
	if r := fake.Requests(); len(r) != 1 || r[0].Prompt != "a red kite" {
		t.Errorf("image requests %+v", r)
	}
}
