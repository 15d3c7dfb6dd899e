package comfytest_test

import (
	"bytes"
	"encoding/json"
	"image/png"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/tool/imagegen/comfytest"
)

func post(t *testing.T, srv *comfytest.Server, path, body string) (int, map[string]any) {
	t.Helper()
	resp, err := srv.Client().Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	json.Unmarshal(b, &v)
	return resp.StatusCode, v
}

func get(t *testing.T, srv *comfytest.Server, path string) (int, string, []byte) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// filled is the test workflow with its placeholders filled by hand.
var filled = strings.NewReplacer(`"{{width}}"`, "512", `"{{height}}"`, "512", `"{{batch_size}}"`, "2", `"{{seed}}"`, "11",
	"{{prompt}}", "a boat", "{{negative_prompt}}", "").Replace(comfytest.Workflow)

// TestRefusesLikeComfyUI: the refusals a client must handle, in
// ComfyUI's shapes.
func TestRefusesLikeComfyUI(t *testing.T) {
	srv := comfytest.New(t, nil)
	tests := []struct {
		name, body string
		status     int
		errType    string
		nodes      []string // node ids with errors
	}{
		{"not JSON", `{"prompt":`, 500, "", nil},
		{"no prompt", `{"client_id":"c"}`, 400, "no_prompt", nil},
		{"unknown class", `{"prompt":{"1":{"class_type":"Upscaler","inputs":{}}}}`, 400, "invalid_prompt", nil},
		{"no class_type", `{"prompt":{"1":{"inputs":{}}}}`, 400, "invalid_prompt", nil},
		{"no output", `{"prompt":{"4":{"class_type":"CheckpointLoaderSimple","inputs":{"ckpt_name":"` + comfytest.DefaultCheckpoint + `"}}}}`, 400, "prompt_no_outputs", nil},
		// The unfilled workflow: "{{seed}}" is no INT, nor "{{width}}".
		{"placeholders left", `{"prompt":` + comfytest.Workflow + `}`, 400, "prompt_outputs_failed_validation", []string{"3", "5"}},
		{"link to nothing", `{"prompt":{"9":{"class_type":"SaveImage","inputs":{"filename_prefix":"x","images":["8",0]}}}}`, 400, "prompt_outputs_failed_validation", []string{"9"}},
		{"wrong link type", `{"prompt":{"4":{"class_type":"CheckpointLoaderSimple","inputs":{"ckpt_name":"` + comfytest.DefaultCheckpoint + `"}},"9":{"class_type":"SaveImage","inputs":{"filename_prefix":"x","images":["4",0]}}}}`, 400, "prompt_outputs_failed_validation", []string{"9"}},
		{"missing input", `{"prompt":{"9":{"class_type":"PreviewImage","inputs":{}}}}`, 400, "prompt_outputs_failed_validation", []string{"9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, v := post(t, srv, "/prompt", tt.body)
			if status != tt.status {
				t.Fatalf("status %d %v, want %d", status, v, tt.status)
			}
			if tt.errType == "" {
				return
			}
			if e, _ := v["error"].(map[string]any); e["type"] != tt.errType {
				t.Errorf("error %v, want type %s", v["error"], tt.errType)
			}
			if _, ok := v["node_errors"]; !ok {
				t.Error("no node_errors")
			}
			ne, _ := v["node_errors"].(map[string]any)
			for _, id := range tt.nodes {
				if _, ok := ne[id]; !ok {
					t.Errorf("node_errors %v lacks node %s", ne, id)
				}
			}
			if len(ne) != len(tt.nodes) {
				t.Errorf("node_errors %v, want nodes %v", ne, tt.nodes)
			}
		})
	}
	if len(srv.Prompts()) != 0 {
		t.Error("a refused prompt was queued")
	}
}

func TestHistoryAndView(t *testing.T) {
	srv := comfytest.New(t, &comfytest.Options{PollsUntilDone: 2})
	status, v := post(t, srv, "/api/prompt", `{"prompt":`+filled+`,"client_id":"c1"}`)
	id, _ := v["prompt_id"].(string)
	if status != 200 || id == "" || v["number"] != 0.0 {
		t.Fatalf("queue = %d %v", status, v)
	}
	for i := range 2 {
		if _, _, b := get(t, srv, "/history/"+id); string(bytes.TrimSpace(b)) != "{}" {
			t.Fatalf("poll %d = %s, want {} before done", i, b)
		}
	}
	_, _, b := get(t, srv, "/history/"+id)
	var hist map[string]struct {
		Outputs map[string]struct {
			Images []struct{ Filename, Subfolder, Type string }
		}
		Status struct {
			StatusStr string `json:"status_str"`
			Completed bool
		}
	}
	if err := json.Unmarshal(b, &hist); err != nil {
		t.Fatal(err)
	}
	e := hist[id]
	if e.Status.StatusStr != "success" || !e.Status.Completed || len(e.Outputs["9"].Images) != 2 {
		t.Fatalf("history = %s, want success with the batch of 2", b)
	}
	for _, im := range e.Outputs["9"].Images {
		q := url.Values{"filename": {im.Filename}, "subfolder": {im.Subfolder}, "type": {im.Type}}
		status, ct, data := get(t, srv, "/view?"+q.Encode())
		if status != 200 || ct != "image/png" {
			t.Fatalf("view %s = %d %s", im.Filename, status, ct)
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("%s is not a PNG: %v", im.Filename, err)
		}
	}
	for path, want := range map[string]int{
		"/view?filename=../secret.png":                     400,
		"/view?filename=%2Fetc%2Fpasswd":                   400,
		"/view?filename=agentcraft_00001_.png&type=models": 400,
		"/view?filename=nope.png":                          404,
		"/view":                                            404,
	} {
		if status, _, _ := get(t, srv, path); status != want {
			t.Errorf("GET %s = %d, want %d", path, status, want)
		}
	}
}

func TestExecutionFailure(t *testing.T) {
	srv := comfytest.New(t, &comfytest.Options{PollsUntilDone: 1, Fail: &comfytest.Failure{ClassType: "VAEDecode", Message: "boom"}})
	_, v := post(t, srv, "/prompt", `{"prompt":`+filled+`}`)
	id := v["prompt_id"].(string)
	get(t, srv, "/history/"+id)
	_, _, b := get(t, srv, "/history/"+id)
	if !strings.Contains(string(b), `"status_str":"error"`) || !strings.Contains(string(b), `"execution_error"`) || !strings.Contains(string(b), `"node_id":"8"`) {
		t.Errorf("history = %s, want an execution_error at node 8", b)
	}
}

func TestQueueDelete(t *testing.T) {
	srv := comfytest.New(t, &comfytest.Options{PollsUntilDone: 1})
	_, v := post(t, srv, "/prompt", `{"prompt":`+filled+`}`)
	id := v["prompt_id"].(string)
	if status, _ := post(t, srv, "/queue", `{"delete":["`+id+`"]}`); status != 200 {
		t.Fatalf("delete = %d", status)
	}
	for range 3 {
		if _, _, b := get(t, srv, "/history/"+id); string(bytes.TrimSpace(b)) != "{}" {
			t.Fatalf("a deleted prompt finished: %s", b)
		}
	}
	if p := srv.Prompts(); !p[0].Deleted {
		t.Error("not marked deleted")
	}
	if _, _, b := get(t, srv, "/queue"); !strings.Contains(string(b), `"queue_pending":[]`) {
		t.Errorf("queue = %s", b)
	}
}
