package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentcraftlab/agentcraft/store"
)

// TestIngestPartial: a job with one broken file reported "succeeded"
// while the CLI exits 1 for the same input; it now ends "partial", and
// the SSE done event, the job and the job list name the failed files.
func TestIngestPartial(t *testing.T) {
	t.Parallel()
	_, _, c := newKnowledgeEnv(t)
	c.json("POST", "/api/kbs", `{"name":"docs"}`, http.StatusCreated, nil)
	body, ct := multipartBody(t,
		file{"valves.txt", "text/plain", "The Zephyr-9 relief valve opens at 42 bar."},
		file{"broken.pdf", "application/pdf", "%PDF-1.7\nthis is not really a pdf\n%%EOF"},
	)
	resp, out := c.send("POST", "/api/kbs/docs/ingest", ct, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ingest = %d %s", resp.StatusCode, out)
	}
	names, data := sseEvents(t, out)
	if len(names) == 0 || names[len(names)-1] != "done" {
		t.Fatalf("events %v; want progress ... done\n%s", names, out)
	}
	type jobBody struct {
		store.IngestJob
		FailedFiles []struct{ Name, Error string } `json:"failed_files"`
	}
	check := func(what string, j jobBody) {
		t.Helper()
		if j.Status != store.IngestPartial || j.Error == "" || len(j.FailedFiles) != 1 || j.FailedFiles[0].Name != "broken.pdf" || j.FailedFiles[0].Error == "" {
			t.Errorf("%s: status %s, error %q, failed files %+v; want partial naming broken.pdf", what, j.Status, j.Error, j.FailedFiles)
		}
	}
	var done jobBody
	if err := json.Unmarshal([]byte(data[len(data)-1]), &done); err != nil {
		t.Fatal(err)
	}
	check("done event", done)
	var got jobBody
	c.json("GET", "/api/kbs/docs/jobs/"+done.ID, "", http.StatusOK, &got)
	check("GET job", got)
	var list struct{ Data []jobBody }
	c.json("GET", "/api/kbs/docs/jobs", "", http.StatusOK, &list)
	if len(list.Data) != 1 {
		t.Fatalf("jobs = %+v", list.Data)
	}
	check("job list", list.Data[0])
}
