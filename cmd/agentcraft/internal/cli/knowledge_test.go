package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeIngestsThroughQueue: on the real server, an ingest request is a
// job of the River queue whose progress streams back as SSE; the indexed
// document is then found by the kb CLI on the same database, and by a
// workflow's rag node.
func TestServeIngestsThroughQueue(t *testing.T) {
	t.Chdir(t.TempDir())
	code, key, errOut := run(t, "keys", "create", "--workspace", "default")
	if code != 0 {
		t.Fatalf("keys create: %s", errOut)
	}
	key = strings.TrimSpace(key)
	if code, _, errOut := run(t, "kb", "create", "manuals"); code != 0 {
		t.Fatalf("kb create: %s", errOut)
	}

	base, logs, stop := startServe(t)
	defer stop()
	call := func(method, path, contentType string, body io.Reader) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, body)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	w, _ := mw.CreateFormFile("file", "valves.md")
	io.WriteString(w, "# Valves\n\nThe Zephyr-9 relief valve opens at 42 bar.\n\n# Pumps\n\nThe Orca pump moves 300 litres a minute.")
	mw.Close()
	status, body := call("POST", "/api/kbs/manuals/ingest", mw.FormDataContentType(), &buf)
	if status != http.StatusOK || !bytes.Contains(body, []byte("event: done")) {
		t.Fatalf("ingest = %d\n%s\nserver log:\n%s", status, body, logs.String())
	}

	code, out, errOut := run(t, "kb", "search", "--kb", "manuals", "--mode", "fulltext", "relief valve")
	if code != 0 || !strings.Contains(out, "42 bar") || !strings.Contains(out, "valves.md") {
		t.Fatalf("kb search: exit %d\n%s\n%s", code, out, errOut)
	}

	def := `{"name":"lookup","nodes":[{"id":"start","type":"start"},
	{"id":"find","type":"rag","config":{"knowledge_base":"manuals","top_k":1}},
	{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"find"},{"id":"e2","source":"find","target":"end"}]}`
	status, body = call("POST", "/api/workflows", "application/json", strings.NewReader(def))
	if status != http.StatusCreated {
		t.Fatalf("create workflow: %d %s", status, body)
	}
	var wf struct{ ID string }
	json.Unmarshal(body, &wf)
	status, body = call("POST", "/api/workflows/"+wf.ID+"/runs", "application/json", strings.NewReader(`{"input":"Orca pump flow"}`))
	if status != http.StatusAccepted {
		t.Fatalf("start run: %d %s", status, body)
	}
	var r struct{ ID string }
	json.Unmarshal(body, &r)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body = call("GET", "/api/runs/"+r.ID, "application/json", nil)
		var got struct {
			Status string
			Output json.RawMessage
			Error  any
		}
		json.Unmarshal(body, &got)
		if got.Status == "succeeded" {
			if !bytes.Contains(got.Output, []byte("300 litres")) || !bytes.Contains(got.Output, []byte("valves.md")) {
				t.Fatalf("rag node output %s", got.Output)
			}
			break
		}
		if got.Status == "failed" || time.Now().After(deadline) {
			t.Fatalf("run: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
