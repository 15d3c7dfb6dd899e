package crash

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// fakeEmbedder is an OpenAI-compatible /v1/embeddings that counts the
// texts it embeds and, while stalling is set, holds any request with a
// text containing "STALL" until the client goes away.
type fakeEmbedder struct {
	mu       sync.Mutex
	stalling bool           // guarded by mu
	texts    map[string]int // file marker → requests that carried it; guarded by mu
	stalled  int            // requests being held; guarded by mu
}

func (e *fakeEmbedder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	hold := false
	for _, in := range req.Input {
		for _, f := range strings.Fields(in) {
			if strings.HasPrefix(f, "file-") {
				e.texts[strings.TrimRight(f, ".")]++
			}
		}
		hold = hold || (e.stalling && strings.Contains(in, "STALL"))
	}
	if hold {
		e.stalled++
	}
	e.mu.Unlock()
	if hold {
		<-r.Context().Done() // the killed process goes away
		e.mu.Lock()
		e.stalled--
		e.mu.Unlock()
		return
	}
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Data []item `json:"data"`
	}{}
	for i := range req.Input {
		out.Data = append(out.Data, item{Index: i, Embedding: []float32{1, float32(i + 1), 0.5, 0.25}})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (e *fakeEmbedder) state() (stalled int, texts map[string]int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	texts = make(map[string]int, len(e.texts))
	for k, v := range e.texts {
		texts[k] = v
	}
	return e.stalled, texts
}

// TestBinaryIngestResumes kills `agentcraft serve` with an ingest job
// half done (the embedder holds the fourth of six files). Before, the job
// stayed "running" with the files done so far until River's rescuer gave
// up on the dead attempt, an hour or more later; now the restarted serve
// resumes it at once. Files indexed before the kill are not embedded
// again; the one in flight is, once.
func TestBinaryIngestResumes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	emb := &fakeEmbedder{stalling: true, texts: map[string]int{}}
	esrv := httptest.NewServer(emb)
	t.Cleanup(esrv.Close)
	cfg := binConfig{dir: dir, dbURL: "sqlite://" + filepath.Join(dir, "agentcraft.db"), embURL: esrv.URL}
	addr := freeAddr(t)

	p1 := startServe(t, "serve#1", cfg, addr)
	api(t, addr, "POST", "/api/kbs", `{"name":"docs"}`, http.StatusCreated, nil)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for i := range 6 {
		text := fmt.Sprintf("Notes file-%d about alpacas and their habits.", i)
		if i == 3 {
			text += " STALL"
		}
		fw, err := mw.CreateFormFile("file", fmt.Sprintf("f%d.txt", i))
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(fw, text)
	}
	mw.Close()
	req, err := http.NewRequestWithContext(t.Context(), "POST", "http://"+addr+"/api/kbs/docs/ingest?wait=false", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var job store.IngestJob
	err = json.NewDecoder(resp.Body).Decode(&job)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("ingest = %d, %v", resp.StatusCode, err)
	}
	eventually(t, 15*time.Second, "the fourth file's embedding request", func() bool { s, _ := emb.state(); return s == 1 })
	killedAt := time.Now()
	p1.kill()

	emb.mu.Lock()
	emb.stalling = false
	emb.mu.Unlock()
	startServe(t, "serve#2", cfg, addr)
	getJob := func() store.IngestJob {
		var j store.IngestJob
		api(t, addr, "GET", "/api/kbs/docs/jobs/"+job.ID, "", http.StatusOK, &j)
		return j
	}
	eventually(t, 15*time.Second, "the interrupted ingest job finishing after the restart", func() bool { return getJob().Status.Final() })
	t.Logf("kill mid-job → job finished after restart: %v", time.Since(killedAt).Round(time.Millisecond))
	got := getJob()
	if got.Status != store.IngestSucceeded || got.FilesDone != 6 {
		t.Errorf("job = %s, %d of 6 files (%q); want succeeded with all 6", got.Status, got.FilesDone, got.Error)
	}
	var srcs struct {
		Data []struct{ Name string }
	}
	api(t, addr, "GET", "/api/kbs/docs/sources", "", http.StatusOK, &srcs)
	if len(srcs.Data) != 6 {
		t.Errorf("sources = %+v, want the 6 files once each", srcs.Data)
	}
	_, texts := emb.state()
	want := map[string]int{"file-0": 1, "file-1": 1, "file-2": 1, "file-3": 2, "file-4": 1, "file-5": 1}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Errorf("embedding requests per file = %v, want %v (only the file in flight at the kill twice)", texts, want)
	}
}
