package imagegen

import (
	"encoding/json"
	"testing"
)

// The parsers of what a ComfyUI or OpenAI-compatible server answers, and
// of the operator's workflow, take outside input: whatever the bytes,
// they return a result or an error, never panic, and a result they
// return is one a caller can use.

func FuzzParseQueued(f *testing.F) {
	f.Add(200, []byte(`{"prompt_id":"abc","number":3,"node_errors":{}}`))
	f.Add(400, []byte(`{"error":{"type":"prompt_outputs_failed_validation","message":"Prompt outputs failed validation","details":"x","extra_info":{}},"node_errors":{"4":{"errors":[{"type":"value_not_in_list","message":"Value not in list","details":"ckpt_name: 'a' not in []","extra_info":{}}],"dependent_outputs":["9"],"class_type":"CheckpointLoaderSimple"}}}`))
	f.Add(400, []byte(`{"error":"no prompt","node_errors":[]}`))
	f.Add(500, []byte("500 Internal Server Error"))
	f.Add(200, []byte(`{"prompt_id":""}`))
	f.Fuzz(func(t *testing.T, status int, data []byte) {
		id, err := parseQueued(status, data)
		if err == nil && (id == "" || status != 200) {
			t.Fatalf("parseQueued(%d, %q) = %q without error", status, data, id)
		}
		if err != nil && id != "" {
			t.Fatalf("id %q with error %v", id, err)
		}
	})
}

func FuzzParseHistory(f *testing.F) {
	f.Add([]byte(`{}`), "p")
	f.Add([]byte(`{"p":{"prompt":[0,"p",{},{},["9"]],"outputs":{"9":{"images":[{"filename":"a_00001_.png","subfolder":"","type":"output"}]}},"status":{"status_str":"success","completed":true,"messages":[["execution_start",{"prompt_id":"p"}]]}}}`), "p")
	f.Add([]byte(`{"p":{"outputs":{},"status":{"status_str":"error","completed":false,"messages":[["execution_error",{"node_id":"3","node_type":"KSampler","exception_message":"oom","exception_type":"RuntimeError"}]]}}}`), "p")
	f.Add([]byte(`{"p":{"outputs":{"10":{"images":[{"filename":"t.png","type":"temp"}]},"9":{"text":["hi"]}}}}`), "p")
	f.Add([]byte(`{"p":{"outputs":{"9":{"images":"x"}}}}`), "p")
	f.Add([]byte(`{"p":{"status":{"status_str":"error","messages":[1,[2],["execution_interrupted",{"node_id":"5"}]]}}}`), "p")
	f.Fuzz(func(t *testing.T, data []byte, id string) {
		done, files, err := parseHistory(data, id)
		if err == nil && done && len(files) == 0 {
			t.Fatal("done without files and without error")
		}
		if !done && len(files) > 0 {
			t.Fatal("files before done")
		}
		for _, fl := range files {
			if fl.Filename == "" || (fl.Type != "output" && fl.Type != "temp") {
				t.Fatalf("file %+v", fl)
			}
		}
	})
}

func FuzzParseGraph(f *testing.F) {
	f.Add([]byte(`{"6":{"class_type":"CLIPTextEncode","inputs":{"text":"{{prompt}}","clip":["4",1]}},"3":{"class_type":"KSampler","inputs":{"seed":"{{ seed }}"}}}`))
	f.Add([]byte(`{"1":{"class_type":"X","inputs":{"a":["{{prompt}}",{"b":"{{width}}x{{height}}"}]}}}`))
	f.Add([]byte(`{"nodes":[],"links":[]}`))
	f.Add([]byte(`{"1":{"class_type":"X","inputs":{"t":"{{prompt}} {{"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := parseGraph(data)
		if err != nil {
			return
		}
		if !g.uses[phPrompt] {
			t.Fatal("a graph without {{prompt}} was accepted")
		}
		out, err := g.fill(map[string]any{phPrompt: "P", phNegative: "", phSeed: int64(1), phWidth: 64, phHeight: 64, phBatch: 1})
		if err != nil {
			t.Fatalf("fill of an accepted graph: %v", err)
		}
		nodes, err := decodeGraph(out)
		if err != nil {
			t.Fatalf("filled graph does not decode: %v", err)
		}
		for id, n := range nodes {
			in, err := nodeInputs(id, n)
			if err != nil {
				t.Fatalf("filled graph: %v", err)
			}
			b, _ := json.Marshal(in)
			var back map[string]any
			json.Unmarshal(b, &back)
			if hasPlaceholder(back) {
				t.Fatalf("unfilled placeholder in node %s: %s", id, b)
			}
		}
	})
}

func hasPlaceholder(v any) bool {
	switch t := v.(type) {
	case string:
		return placeholderRE.MatchString(t)
	case []any:
		for _, e := range t {
			if hasPlaceholder(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range t {
			if hasPlaceholder(e) {
				return true
			}
		}
	}
	return false
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1024x1024", "auto", "", "64x4096", "x", "1x", "+100x100", "100x-1", "10e2x100", "1024X1024"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, h, err := ParseSize(s)
		if err != nil {
			return
		}
		if (w == 0) != (h == 0) || w != 0 && (w < MinSide || w > MaxSide || h < MinSide || h > MaxSide) {
			t.Fatalf("ParseSize(%q) = %d, %d", s, w, h)
		}
	})
}

func FuzzParseOpenAIAnswer(f *testing.F) {
	f.Add([]byte(`{"created":1,"data":[{"b64_json":"iVBORw0KGgo="}]}`))
	f.Add([]byte(`{"data":[{"url":"https://cdn.example.com/a.png"},{"b64_json":"%"}]}`))
	f.Add([]byte(`{"data":[{"url":"javascript:alert(1)"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := parseOpenAIAnswer(data)
		if err != nil {
			return
		}
		if len(items) == 0 {
			t.Fatal("no items without error")
		}
		for _, it := range items {
			if it.b64 == nil && (it.url == nil || (it.url.Scheme != "http" && it.url.Scheme != "https") || it.url.Host == "") {
				t.Fatalf("item %+v", it)
			}
		}
	})
}
