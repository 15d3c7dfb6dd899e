package kb

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

// TestIngestSameFileTwice: a folder ingested ("docs/a.md") and then one
// of its files by name ("a.md") stored the file twice, so every search
// found it twice. The second is now recognised by its content; spellings
// of one path are one source.
func TestIngestSameFileTwice(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	kb := f.create(t, "docs")
	data := []byte("# Leave\n\nAlpacas get three weeks of leave.")
	f.ingest(t, kb, "docs/a.md", data)

	res := f.ingest(t, kb, "a.md", data)
	if res.DuplicateOf != "docs/a.md" || res.Chunks != 0 || len(res.Warnings) == 0 {
		t.Errorf("by name = %+v; want DuplicateOf docs/a.md, no chunks and a warning", res)
	}
	for _, name := range []string{"./docs/a.md", `docs\a.md`, "docs//a.md"} {
		if res := f.ingest(t, kb, name, data); res.DuplicateOf != "" || res.Chunks != 1 {
			t.Errorf("%s = %+v; want the same source re-ingested, not a duplicate", name, res)
		}
	}
	srcs, err := f.svc.Sources(ctx, kb)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]SourceInfo{{Name: "docs/a.md", Documents: 1, Chunks: 1}}, srcs); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	if got := f.find(t, f.ws.ID, []string{"docs"}, "alpacas leave"); len(got) != 1 {
		t.Errorf("search hits = %v, want the file once", got)
	}
	if c := f.counts(t, kb); c != [2]int{1, 1} {
		t.Errorf("counts = %v, want [1 1]", c)
	}
	// Other content under the other name is a file of its own.
	if res := f.ingest(t, kb, "a.md", []byte("Bison roam the plains.")); res.DuplicateOf != "" || res.Chunks != 1 {
		t.Errorf("a.md with new content = %+v; want it indexed", res)
	}

	// In an ingest job the duplicate is skipped, saying of what.
	dup := f.upload(t, "copy.md", data)
	job, err := f.st.IngestJobs().Create(ctx, store.IngestJob{WorkspaceID: f.ws.ID, KnowledgeBaseID: kb.ID, Files: []store.IngestFile{dup}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.RunJob(ctx, f.ws.ID, job.ID, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := f.st.IngestJobs().Get(ctx, f.ws.ID, job.ID)
	if got.Status != store.IngestSucceeded || got.Files[0].Status != FileSkipped || !slices.Contains([]string{`same content as "docs/a.md", already in the base`}, got.Files[0].Error) {
		t.Errorf("job = %s, file %+v; want succeeded with the copy skipped as a duplicate", got.Status, got.Files[0])
	}
}
