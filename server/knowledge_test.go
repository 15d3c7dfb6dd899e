package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

func newKnowledgeEnv(t *testing.T, agents ...platform.AgentSpec) (*servertest.Env, *llmtest.Server, client) {
	t.Helper()
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{fakeProvider(fake)}, Agents: agents,
		Knowledge: true, MaxUploadBytes: 64 << 10})
	return env, fake, client{t: t, base: env.URL, key: env.Key}
}

type file struct{ name, contentType, body string }

// multipartBody builds a multipart/form-data body with one "file" part per
// file.
func multipartBody(t *testing.T, files ...file) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range files {
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name="file"; filename=%q`, f.name)}
		if f.contentType != "" {
			h["Content-Type"] = []string{f.contentType}
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f.body)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String(), mw.FormDataContentType()
}

func (c client) send(method, path, contentType, body string) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := noRedirects.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp, b
}

// sseEvents splits an SSE body into (event, data) pairs.
func sseEvents(t *testing.T, body []byte) (names []string, data []string) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
	name := "message"
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			names = append(names, name)
			data = append(data, strings.TrimSpace(strings.TrimPrefix(line, "data:")))
			name = "message"
		}
	}
	return names, data
}

func TestKnowledgeBasesCRUD(t *testing.T) {
	t.Parallel()
	_, _, c := newKnowledgeEnv(t)
	var kb store.KnowledgeBase
	c.json("POST", "/api/kbs", `{"name":"manuals","description":"product manuals"}`, http.StatusCreated, &kb)
	if kb.ID == "" || kb.Name != "manuals" || !strings.Contains(kb.IndexName, "_kb_"+kb.ID) {
		t.Fatalf("created %+v; want an id and index {workspace}_kb_{id}", kb)
	}
	resp, body := c.do("POST", "/api/kbs", `{"name":"manuals"}`)
	wantError(t, resp, body, http.StatusConflict, "conflict")
	resp, body = c.do("POST", "/api/kbs", `{"name":"no spaces please"}`)
	wantError(t, resp, body, http.StatusBadRequest, "invalid_request")
	resp, body = c.do("POST", "/api/kbs", `{"name":"x","colour":"blue"}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown field: %d %s", resp.StatusCode, body)
	}

	var byName, byID store.KnowledgeBase
	c.json("GET", "/api/kbs/manuals", "", http.StatusOK, &byName)
	c.json("GET", "/api/kbs/"+kb.ID, "", http.StatusOK, &byID)
	if byName.ID != kb.ID || byID.Name != "manuals" {
		t.Errorf("get by name %+v, by id %+v", byName, byID)
	}
	var list struct{ Data []store.KnowledgeBase }
	c.json("GET", "/api/kbs", "", http.StatusOK, &list)
	if len(list.Data) != 1 || list.Data[0].ID != kb.ID {
		t.Errorf("list = %+v", list.Data)
	}
	var upd store.KnowledgeBase
	c.json("PATCH", "/api/kbs/"+kb.ID, `{"description":"all manuals"}`, http.StatusOK, &upd)
	if upd.Description != "all manuals" || upd.Name != "manuals" {
		t.Errorf("updated = %+v", upd)
	}
	resp, body = c.do("DELETE", "/api/kbs/manuals", "")
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete = %d %s", resp.StatusCode, body)
	}
	resp, body = c.do("GET", "/api/kbs/"+kb.ID, "")
	wantError(t, resp, body, http.StatusNotFound, "not_found")
}

func TestKnowledgeNotConfigured(t *testing.T) {
	t.Parallel()
	_, _, c := newEnv(t)
	resp, body := c.do("GET", "/api/kbs", "")
	wantError(t, resp, body, http.StatusServiceUnavailable, "knowledge_not_configured")
}

func TestIngestStreamsProgressThenSearch(t *testing.T) {
	t.Parallel()
	_, _, c := newKnowledgeEnv(t)
	c.json("POST", "/api/kbs", `{"name":"docs"}`, http.StatusCreated, nil)
	body, ct := multipartBody(t,
		file{"valves.txt", "text/plain", "Valve maintenance.\n\nThe Zephyr-9 relief valve opens at 42 bar and must be inspected every spring."},
		file{"pumps.html", "text/html", "<html><body><nav>menu</nav><main><h1>Pumps</h1><p>The Orca pump moves 300 litres per minute.</p></main></body></html>"},
	)
	resp, out := c.send("POST", "/api/kbs/docs/ingest", ct, body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("ingest = %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), out)
	}
	names, data := sseEvents(t, out)
	if len(names) < 2 || names[0] != "progress" || names[len(names)-1] != "done" {
		t.Fatalf("events %v; want progress ... done\n%s", names, out)
	}
	var job store.IngestJob
	if err := json.Unmarshal([]byte(data[len(data)-1]), &job); err != nil {
		t.Fatal(err)
	}
	if job.Status != store.IngestSucceeded || job.FilesDone != 2 || job.Chunks < 2 {
		t.Fatalf("final job %+v", job)
	}
	for _, f := range job.Files {
		if f.Status != "ok" || f.Chunks == 0 {
			t.Errorf("file %+v not ingested", f)
		}
	}

	var res struct {
		Hits []struct {
			ID, KB, Text string
			Metadata     map[string]string
		}
		Mode string
	}
	c.json("POST", "/api/kbs/docs/search", `{"query":"relief valve pressure","mode":"fulltext"}`, http.StatusOK, &res)
	if len(res.Hits) == 0 || res.Hits[0].Metadata["source"] != "valves.txt" || !strings.Contains(res.Hits[0].Text, "42 bar") {
		t.Fatalf("search hits %+v", res.Hits)
	}
	resp, b := c.do("POST", "/api/kbs/docs/search", `{"query":"  "}`)
	wantError(t, resp, b, http.StatusBadRequest, "invalid_request")
	resp, b = c.do("POST", "/api/kbs/docs/search", `{"query":"x","mode":"psychic"}`)
	wantError(t, resp, b, http.StatusBadRequest, "invalid_request")

	var jobs struct{ Data []store.IngestJob }
	c.json("GET", "/api/kbs/docs/jobs", "", http.StatusOK, &jobs)
	if len(jobs.Data) != 1 || jobs.Data[0].ID != job.ID {
		t.Errorf("jobs = %+v", jobs.Data)
	}
	// A finished job's stream replays its final state and ends.
	resp, out = c.do("GET", "/api/kbs/docs/jobs/"+job.ID+"/events", "")
	if names, _ := sseEvents(t, out); resp.StatusCode != http.StatusOK || len(names) != 1 || names[0] != "done" {
		t.Errorf("replay = %d %v", resp.StatusCode, names)
	}
	var kb store.KnowledgeBase
	c.json("GET", "/api/kbs/docs", "", http.StatusOK, &kb)
	if kb.Documents != 2 || kb.Chunks != job.Chunks {
		t.Errorf("kb counts %d documents %d chunks, want 2 and %d", kb.Documents, kb.Chunks, job.Chunks)
	}
	var srcs struct {
		Data []struct {
			Name              string
			Documents, Chunks int
		}
	}
	c.json("GET", "/api/kbs/docs/sources", "", http.StatusOK, &srcs)
	if len(srcs.Data) != 2 || srcs.Data[0].Name != "pumps.html" || srcs.Data[1].Name != "valves.txt" ||
		srcs.Data[0].Chunks+srcs.Data[1].Chunks != job.Chunks || srcs.Data[1].Documents != 1 {
		t.Errorf("sources = %+v, want pumps.html and valves.txt with the job's %d chunks", srcs.Data, job.Chunks)
	}
	resp, b = c.do("GET", "/api/kbs/nosuch/sources", "")
	wantError(t, resp, b, http.StatusNotFound, "not_found")
}

func TestUploadThenIngestByID(t *testing.T) {
	t.Parallel()
	_, _, c := newKnowledgeEnv(t)
	c.json("POST", "/api/kbs", `{"name":"docs"}`, http.StatusCreated, nil)
	body, ct := multipartBody(t, file{"notes.md", "text/markdown", "# Notes\n\nThe canteen opens at 11:30."})
	resp, out := c.send("POST", "/api/upload", ct, body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload = %d %s", resp.StatusCode, out)
	}
	var up struct {
		FileID string `json:"fileId"`
		Size   int64
	}
	if err := json.Unmarshal(out, &up); err != nil || up.FileID == "" || up.Size != int64(len("# Notes\n\nThe canteen opens at 11:30.")) {
		t.Fatalf("upload answer %s (%v)", out, err)
	}
	resp, out = c.send("POST", "/api/kbs/docs/ingest?wait=false", "application/json", `{"file_ids":["`+up.FileID+`"]}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ingest by id = %d %s", resp.StatusCode, out)
	}
	var job store.IngestJob
	json.Unmarshal(out, &job)
	resp, out = c.do("GET", "/api/kbs/docs/jobs/"+job.ID+"/events", "")
	if names, _ := sseEvents(t, out); resp.StatusCode != http.StatusOK || names[len(names)-1] != "done" {
		t.Fatalf("events = %d %v", resp.StatusCode, names)
	}

	// Bad input: an unknown upload, no file, an oversized file, not multipart.
	resp, out = c.send("POST", "/api/kbs/docs/ingest", "application/json", `{"file_ids":["nope"]}`)
	d := wantError(t, resp, out, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(d.Message, "nope") {
		t.Errorf("message %q does not name the upload", d.Message)
	}
	empty, ect := multipartBody(t)
	resp, out = c.send("POST", "/api/upload", ect, empty)
	wantError(t, resp, out, http.StatusBadRequest, "invalid_request")
	big, bct := multipartBody(t, file{"big.txt", "text/plain", strings.Repeat("x", 65<<10)})
	resp, out = c.send("POST", "/api/upload", bct, big)
	wantError(t, resp, out, http.StatusRequestEntityTooLarge, "file_too_large")
	resp, out = c.send("POST", "/api/upload", "application/json", `{}`)
	wantError(t, resp, out, http.StatusBadRequest, "invalid_request")
	resp, out = c.send("POST", "/api/kbs/missing/ingest", ct, body)
	wantError(t, resp, out, http.StatusNotFound, "not_found")
}

// TestUploadChatCites is the acceptance test: a document uploaded and
// referenced in a chat reaches the model as numbered context it can cite.
func TestUploadChatCites(t *testing.T) {
	t.Parallel()
	_, fake, c := newKnowledgeEnv(t, helper)
	doc := "Safety manual.\n\nThe Zephyr-9 relief valve opens at 42 bar. Inspect it every spring."
	body, ct := multipartBody(t, file{"manual.txt", "text/plain", doc})
	resp, out := c.send("POST", "/api/upload", ct, body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload = %d %s", resp.StatusCode, out)
	}
	var up struct {
		FileID string `json:"fileId"`
	}
	json.Unmarshal(out, &up)

	fake.Push(llmtest.Turn{Text: "It opens at 42 bar [1]."}, llmtest.Turn{Text: "Every spring [1]."})
	chat := `{"model":"helper","messages":[{"role":"user","content":[{"type":"text","text":"At what pressure does the Zephyr-9 valve open?"},{"type":"file","file":{"file_id":"` + up.FileID + `"}}]}]}`
	var answer struct {
		Choices []struct{ Message struct{ Content string } }
	}
	c.json("POST", "/v1/chat/completions", chat, http.StatusOK, &answer)
	if len(answer.Choices) != 1 || answer.Choices[0].Message.Content != "It opens at 42 bar [1]." {
		t.Fatalf("answer %+v", answer)
	}
	// A second turn of the same conversation (files listed at the top, as
	// Open WebUI sends them) searches the same document again.
	chat2 := `{"model":"helper","files":[{"id":"` + up.FileID + `"}],"messages":[{"role":"user","content":"When must the Zephyr-9 valve be inspected?"}]}`
	c.json("POST", "/v1/chat/completions", chat2, http.StatusOK, nil)

	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream requests = %d, want 2", len(reqs))
	}
	for i, r := range reqs {
		var sent struct {
			Messages []struct {
				Role    string
				Content json.RawMessage
			}
		}
		if err := json.Unmarshal(r.Body, &sent); err != nil {
			t.Fatal(err)
		}
		var system string
		for _, m := range sent.Messages {
			if m.Role == "system" || m.Role == "developer" {
				system += string(m.Content)
			}
		}
		if !strings.Contains(system, "[1]") || !strings.Contains(system, "manual.txt") || !strings.Contains(system, "42 bar") {
			t.Errorf("request %d: system message does not carry the document as source [1]:\n%s", i+1, system)
		}
		if !strings.Contains(system, "Help.") {
			t.Errorf("request %d: the agent's own instructions were lost:\n%s", i+1, system)
		}
	}

	// An unknown file id is a 400 naming it, before any model call.
	resp, out = c.do("POST", "/v1/chat/completions", `{"model":"helper","files":[{"id":"gone"}],"messages":[{"role":"user","content":"hi"}]}`)
	d := wantError(t, resp, out, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(d.Message, "gone") {
		t.Errorf("message %q does not name the file", d.Message)
	}
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("a rejected chat reached the model (%d requests)", n)
	}
}

func TestChatImageAttachment(t *testing.T) {
	t.Parallel()
	_, fake, c := newKnowledgeEnv(t, helper)
	png := "\x89PNG\r\n\x1a\nfake-pixels"
	body, ct := multipartBody(t, file{"photo.png", "image/png", png})
	_, out := c.send("POST", "/api/upload", ct, body)
	var up struct {
		FileID string `json:"fileId"`
	}
	json.Unmarshal(out, &up)
	fake.Push(llmtest.Turn{Text: "A photo."})
	c.json("POST", "/v1/chat/completions", `{"model":"helper","messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"file","file":{"file_id":"`+up.FileID+`"}}]}]}`, http.StatusOK, nil)
	reqs := fake.Requests()
	if len(reqs) != 1 || !bytes.Contains(reqs[0].Body, []byte("data:image/png;base64,")) {
		t.Fatalf("the image did not reach the model as an image part: %s", reqs[0].Body)
	}
}

// TestAgentKnowledgeBasesAndTool: an agent made through the API with a
// knowledge base gets retrieved context on every request, and its
// kb_search tool searches the same base when the model asks.
func TestAgentKnowledgeBasesAndTool(t *testing.T) {
	t.Parallel()
	_, fake, c := newKnowledgeEnv(t)
	c.json("POST", "/api/kbs", `{"name":"docs"}`, http.StatusCreated, nil)
	body, ct := multipartBody(t, file{"pumps.txt", "text/plain", "The Orca pump moves 300 litres per minute.\n\nThe Zephyr-9 valve opens at 42 bar."})
	if resp, out := c.send("POST", "/api/kbs/docs/ingest", ct, body); resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("event: done")) {
		t.Fatalf("ingest = %d %s", resp.StatusCode, out)
	}
	c.json("POST", "/api/agents", `{"name":"support","model":"fake/fake-model","instructions":"Answer from the manuals.","tools":["kb_search"],"knowledge_bases":["docs"]}`, http.StatusCreated, nil)
	fake.Push(
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "kb_search", Arguments: `{"query":"Orca pump litres"}`}}},
		llmtest.Turn{Text: "300 litres per minute [1]."},
	)
	var answer struct {
		Choices []struct{ Message struct{ Content string } }
	}
	c.json("POST", "/v1/chat/completions", `{"model":"support","messages":[{"role":"user","content":"How fast is the Orca pump?"}]}`, http.StatusOK, &answer)
	if answer.Choices[0].Message.Content != "300 litres per minute [1]." {
		t.Fatalf("answer %+v", answer)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream requests = %d, want 2", len(reqs))
	}
	if !bytes.Contains(reqs[0].Body, []byte("pumps.txt")) || !bytes.Contains(reqs[0].Body, []byte("300 litres")) {
		t.Errorf("first request carries no retrieved context: %s", reqs[0].Body)
	}
	if !bytes.Contains(reqs[0].Body, []byte(`"kb_search"`)) {
		t.Errorf("kb_search was not offered to the model: %s", reqs[0].Body)
	}
	if !bytes.Contains(reqs[1].Body, []byte(`"role":"tool"`)) || !bytes.Contains(reqs[1].Body, []byte("300 litres")) {
		t.Errorf("the tool result did not go back with the passage: %s", reqs[1].Body)
	}
	// kb_search without knowledge search configured is an unknown tool.
	_, _, plain := newEnv(t)
	resp, out := plain.do("POST", "/api/agents", `{"name":"x","model":"fake/fake-model","tools":["kb_search"]}`)
	wantError(t, resp, out, http.StatusBadRequest, "invalid_request")
}

// TestAPIChatAcceptsAttachments: /api/chat takes the same uploads as /v1 —
// as a file content part or in files — and the agent answers from them.
func TestAPIChatAcceptsAttachments(t *testing.T) {
	t.Parallel()
	_, fake, c := newKnowledgeEnv(t, helper)
	doc := "Safety manual.\n\nThe Zephyr-9 relief valve opens at 42 bar. Inspect it every spring."
	body, ct := multipartBody(t, file{"manual.txt", "text/plain", doc})
	resp, out := c.send("POST", "/api/upload", ct, body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload = %d %s", resp.StatusCode, out)
	}
	var up struct {
		FileID string `json:"fileId"`
	}
	json.Unmarshal(out, &up)
	fake.Push(llmtest.Turn{Text: "It opens at 42 bar [1]."}, llmtest.Turn{Text: "Every spring [1]."})
	for i, chat := range []string{
		`{"agent":"helper","messages":[{"role":"user","content":[{"type":"text","text":"At what pressure does the Zephyr-9 valve open?"},{"type":"file","file":{"file_id":"` + up.FileID + `"}}]}]}`,
		`{"agent":"helper","files":[{"id":"` + up.FileID + `"}],"messages":[{"role":"user","content":"When must the Zephyr-9 valve be inspected?"}]}`,
	} {
		var answer struct {
			Message struct{ Content string }
		}
		c.json("POST", "/api/chat", chat, http.StatusOK, &answer)
		if !strings.Contains(answer.Message.Content, "[1]") {
			t.Errorf("chat %d answer = %+v", i+1, answer)
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream requests = %d, want 2", len(reqs))
	}
	for i, r := range reqs {
		if !strings.Contains(string(r.Body), "42 bar") || !strings.Contains(string(r.Body), "manual.txt") {
			t.Errorf("request %d does not carry the uploaded document as a source:\n%s", i+1, r.Body)
		}
	}
	resp, out = c.do("POST", "/api/chat", `{"agent":"helper","files":[{"id":"gone"}],"messages":[{"role":"user","content":"hi"}]}`)
	d := wantError(t, resp, out, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(d.Message, "gone") {
		t.Errorf("message %q does not name the file", d.Message)
	}
}
