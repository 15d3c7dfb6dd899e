package kb

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// fixture is a Service on a fresh SQLite store and an in-memory engine,
// with a clock the test moves.
type fixture struct {
	svc *Service
	st  store.Store
	eng *memory.Engine
	ws  store.Workspace

	mu  sync.Mutex
	now time.Time // guarded by mu
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	eng, err := memory.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, eng: eng, now: time.Now().UTC().Truncate(time.Second)}
	f.svc, err = New(Options{Store: st, Engine: eng, TempTTL: time.Hour, Now: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	f.ws = f.workspace(t, "team")
	return f
}

func (f *fixture) workspace(t *testing.T, name string) store.Workspace {
	t.Helper()
	ws, err := f.st.Workspaces().GetOrCreate(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func (f *fixture) create(t *testing.T, name string) store.KnowledgeBase {
	t.Helper()
	kb, err := f.svc.Create(context.Background(), f.ws.ID, name, "")
	if err != nil {
		t.Fatal(err)
	}
	return kb
}

func (f *fixture) ingest(t *testing.T, kb store.KnowledgeBase, name string, data []byte) IngestResult {
	t.Helper()
	res, err := f.svc.Ingest(context.Background(), kb, name, data)
	if err != nil {
		t.Fatalf("Ingest(%s): %v", name, err)
	}
	return res
}

// find searches kbs and returns "kb:id" per hit.
func (f *fixture) find(t *testing.T, ws string, kbs []string, text string) []string {
	t.Helper()
	res, err := f.svc.Search(context.Background(), ws, kbs, search.Query{Text: text})
	if err != nil {
		t.Fatalf("Search(%v, %q): %v", kbs, text, err)
	}
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Metadata["kb"]+":"+h.ID)
	}
	return out
}

// engineHits searches the engine directly, bypassing the catalogue.
func (f *fixture) engineHits(t *testing.T, index, text string) int {
	t.Helper()
	res, err := f.eng.Search(context.Background(), search.Query{Text: text, Indexes: []string{index}})
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Hits)
}

func (f *fixture) counts(t *testing.T, kb store.KnowledgeBase) [2]int {
	t.Helper()
	got, err := f.st.KnowledgeBases().Get(context.Background(), kb.WorkspaceID, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	return [2]int{got.Documents, got.Chunks}
}

func makeZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[name]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// longText is n sentences mentioning word, long enough for several chunks.
func longText(word string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "Sentence %d talks about %s and nothing else of note in this paragraph. ", i, word)
	}
	return b.String()
}

func TestNames(t *testing.T) {
	if got := IndexName("ws1", "abc"); got != "ws1_kb_abc" {
		t.Errorf("IndexName = %q", got)
	}
	if got := TempIndexName("ws1", "u-1"); got != "ws1_rag_u-1" {
		t.Errorf("TempIndexName = %q", got)
	}
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"handbook", true},
		{"HR_policies-2024.v2", true},
		{strings.Repeat("a", 64), true},
		{"", false},
		{strings.Repeat("a", 65), false},
		{"with space", false},
		{"slash/name", false},
		{"日本語", false},
	} {
		if err := ValidateName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		} else if err != nil && !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ValidateName(%q) = %v, want ErrInvalid", tc.name, err)
		}
	}
}

func TestCreateResolveListUpdateDelete(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	hb, err := f.svc.Create(ctx, f.ws.ID, "handbook", "HR policies")
	if err != nil {
		t.Fatal(err)
	}
	if hb.IndexName != IndexName(f.ws.ID, hb.ID) || hb.Description != "HR policies" || hb.Temporary() {
		t.Errorf("created %+v", hb)
	}
	if _, err := f.svc.Create(ctx, f.ws.ID, "bad name", ""); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("bad name: %v, want ErrInvalid", err)
	}
	if _, err := f.svc.Create(ctx, f.ws.ID, "handbook", ""); !errors.Is(err, store.ErrConflict) {
		t.Errorf("duplicate name: %v, want ErrConflict", err)
	}
	f.create(t, "alpha")
	for _, key := range []string{hb.ID, "handbook"} {
		got, err := f.svc.Resolve(ctx, f.ws.ID, key)
		if err != nil || got.ID != hb.ID {
			t.Errorf("Resolve(%q) = %s, %v; want %s", key, got.ID, err, hb.ID)
		}
	}
	_, err = f.svc.Resolve(ctx, f.ws.ID, "nosuch")
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("Resolve(nosuch) = %v, want ErrNotFound naming it", err)
	}
	list, err := f.svc.List(ctx, f.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, kb := range list {
		names = append(names, kb.Name)
	}
	if !slices.Equal(names, []string{"alpha", "handbook"}) {
		t.Errorf("List = %v", names)
	}

	newName, desc := "policies", "All HR policies"
	up, err := f.svc.Update(ctx, f.ws.ID, "handbook", Changes{Name: &newName, Description: &desc})
	if err != nil || up.Name != "policies" || up.Description != desc {
		t.Fatalf("Update = %+v, %v", up, err)
	}
	taken := "alpha"
	if _, err := f.svc.Update(ctx, f.ws.ID, "policies", Changes{Name: &taken}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("rename to a taken name: %v, want ErrConflict", err)
	}

	f.ingest(t, up, "leave.txt", []byte("Employees get twenty days of paid vacation every year."))
	if got := f.find(t, f.ws.ID, []string{"policies"}, "vacation"); !slices.Equal(got, []string{"policies:leave.txt#0"}) {
		t.Fatalf("search before delete: %v", got)
	}
	// The rename kept the settings written by the ingest.
	if srcs, _ := f.svc.Sources(context.Background(), mustGet(t, f, up)); len(srcs) != 1 || srcs[0].Name != "leave.txt" {
		t.Errorf("sources = %+v", srcs)
	}
	if err := f.svc.Delete(ctx, f.ws.ID, "policies"); err != nil {
		t.Fatal(err)
	}
	if n := f.engineHits(t, hb.IndexName, "vacation"); n != 0 {
		t.Errorf("the index still answers after Delete: %d hits", n)
	}
	if _, err := f.svc.Resolve(ctx, f.ws.ID, hb.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Resolve after Delete: %v", err)
	}
	if err := f.svc.Delete(ctx, f.ws.ID, "policies"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
}

func mustGet(t *testing.T, f *fixture, kb store.KnowledgeBase) store.KnowledgeBase {
	t.Helper()
	got, err := f.st.KnowledgeBases().Get(context.Background(), kb.WorkspaceID, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTemporaryBasesAndSweep(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	tmp, err := f.svc.CreateTemporary(ctx, f.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !tmp.ExpiresAt.Equal(f.clock().Add(time.Hour)) {
		t.Errorf("ExpiresAt = %v, want now+1h %v", tmp.ExpiresAt, f.clock().Add(time.Hour))
	}
	if tmp.IndexName != TempIndexName(f.ws.ID, tmp.ID) {
		t.Errorf("IndexName = %q", tmp.IndexName)
	}
	keep := f.create(t, "keep")
	f.ingest(t, tmp, "chat.txt", []byte("The quarterly revenue grew by twelve percent."))
	f.ingest(t, keep, "notes.txt", []byte("Revenue notes kept forever."))
	if list, _ := f.svc.List(ctx, f.ws.ID); len(list) != 1 || list[0].Name != "keep" {
		t.Errorf("List shows temporary bases: %+v", list)
	}
	if got := f.find(t, f.ws.ID, []string{tmp.ID}, "quarterly revenue"); len(got) != 1 {
		t.Errorf("temporary base search: %v", got)
	}
	up, err := f.st.Uploads().Put(ctx, store.Upload{WorkspaceID: f.ws.ID, Name: "a.txt", Size: 1, Data: []byte("a"), ExpiresAt: f.clock().Add(30 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}

	// Nothing has expired yet.
	if b, u, err := f.svc.Sweep(ctx); err != nil || b != 0 || u != 0 {
		t.Fatalf("early Sweep = %d, %d, %v", b, u, err)
	}
	f.advance(2 * time.Hour)
	if _, err := f.svc.Resolve(ctx, f.ws.ID, tmp.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Resolve of an expired base: %v, want ErrNotFound", err)
	}
	b, u, err := f.svc.Sweep(ctx)
	if err != nil || b != 1 || u != 1 {
		t.Fatalf("Sweep = %d bases, %d uploads, %v; want 1, 1", b, u, err)
	}
	if n := f.engineHits(t, tmp.IndexName, "revenue"); n != 0 {
		t.Errorf("swept base's index still has %d hits", n)
	}
	if _, err := f.st.KnowledgeBases().Get(ctx, f.ws.ID, tmp.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("swept base row: %v", err)
	}
	if _, err := f.st.Uploads().Info(ctx, f.ws.ID, up.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("swept upload: %v", err)
	}
	if got := f.find(t, f.ws.ID, []string{"keep"}, "revenue"); len(got) != 1 {
		t.Errorf("persistent base after sweep: %v", got)
	}
}

func TestIngestFormats(t *testing.T) {
	f := newFixture(t)
	kb := f.create(t, "docs")
	jsonl := `{"_id":"d1","title":"Photosynthesis","text":"Plants turn sunlight into chemical energy."}
{"_id":"d2","title":"Volcanoes","text":"Magma erupts through the crust."}

{"_id":3,"title":"Numbers","text":"A numeric identifier for a glacier."}
`
	tests := []struct {
		name, file string
		data       []byte
		docs       int
		chunks     int // 0: more than one
		query      string
		wantID     string
		source     string
	}{
		{"txt", "notes.txt", []byte("Octopuses have three hearts and blue blood."), 1, 1, "octopuses hearts", "notes.txt#0", "notes.txt"},
		{"html", "page.html", []byte(`<html><head><title>Zebra facts</title></head><body><h1>Stripes</h1><p>Every zebra has a unique stripe pattern.</p></body></html>`), 1, 1, "zebra stripe", "page.html#0", "page.html"},
		{"zip", "bundle.zip", makeZip(t, map[string]string{"a.txt": "Saturn has rings of ice.", "dir/b.md": "# Mars\n\nMars has the tallest volcano, Olympus Mons."}), 2, 2, "olympus mons", "bundle.zip/dir/b.md#0", "bundle.zip/dir/b.md"},
		{"jsonl", "corpus.jsonl", []byte(jsonl), 3, 3, "magma crust", "d2", "corpus.jsonl"},
		{"long txt", "long.txt", []byte(longText("quasars", 200)), 1, 0, "quasars", "", "long.txt"},
	}
	var totalDocs, totalChunks int
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := f.ingest(t, kb, tc.file, tc.data)
			if res.Documents != tc.docs {
				t.Errorf("Documents = %d, want %d", res.Documents, tc.docs)
			}
			if tc.chunks > 0 && res.Chunks != tc.chunks || tc.chunks == 0 && res.Chunks < 2 {
				t.Errorf("Chunks = %d, want %d (0: several)", res.Chunks, tc.chunks)
			}
			totalDocs += res.Documents
			totalChunks += res.Chunks
			got, err := f.svc.Search(context.Background(), f.ws.ID, []string{"docs"}, search.Query{Text: tc.query, TopK: 1})
			if err != nil || len(got.Hits) == 0 {
				t.Fatalf("Search(%q) = %+v, %v", tc.query, got, err)
			}
			h := got.Hits[0]
			if tc.wantID != "" && h.ID != tc.wantID {
				t.Errorf("top hit %q, want %q", h.ID, tc.wantID)
			}
			if h.Metadata["source"] != tc.source || h.Metadata["kb"] != "docs" {
				t.Errorf("metadata %v, want source %q and kb docs", h.Metadata, tc.source)
			}
		})
	}
	if got := f.counts(t, kb); got != [2]int{totalDocs, totalChunks} {
		t.Errorf("kb counts = %v, want %v", got, [2]int{totalDocs, totalChunks})
	}
	if f.eng.Len(kb.IndexName) != totalChunks {
		t.Errorf("engine holds %d documents, want %d", f.eng.Len(kb.IndexName), totalChunks)
	}

	// Bad input.
	if _, err := f.svc.Ingest(context.Background(), kb, "bad.jsonl", []byte(`{"title":"no id"}`)); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("JSONL without _id: %v, want an error naming line 1", err)
	}
	res, err := f.svc.Ingest(context.Background(), kb, "empty.txt", []byte("   \n"))
	if err != nil || res.Chunks != 0 || len(res.Warnings) == 0 {
		t.Errorf("empty file = %+v, %v; want no chunks and a warning", res, err)
	}
}

func TestReingestReplaces(t *testing.T) {
	f := newFixture(t)
	kb := f.create(t, "docs")
	first := f.ingest(t, kb, "guide.txt", []byte(longText("pelicans", 200)))
	if first.Chunks < 3 {
		t.Fatalf("want several chunks, got %d", first.Chunks)
	}
	f.ingest(t, kb, "other.txt", []byte("Penguins cannot fly."))
	second := f.ingest(t, kb, "guide.txt", []byte("Flamingos are pink because of their diet."))
	if second.Chunks != 1 {
		t.Fatalf("second ingest: %d chunks", second.Chunks)
	}
	if got := f.find(t, f.ws.ID, []string{"docs"}, "pelicans"); len(got) != 0 {
		t.Errorf("old chunks still found: %v", got)
	}
	if got := f.find(t, f.ws.ID, []string{"docs"}, "flamingos"); !slices.Equal(got, []string{"docs:guide.txt#0"}) {
		t.Errorf("new chunk: %v", got)
	}
	if got := f.counts(t, kb); got != [2]int{2, 2} {
		t.Errorf("counts after re-ingest = %v, want [2 2]", got)
	}
	if f.eng.Len(kb.IndexName) != 2 {
		t.Errorf("engine holds %d documents, want 2", f.eng.Len(kb.IndexName))
	}

	// A JSONL corpus re-ingested without a line loses that document.
	f.ingest(t, kb, "c.jsonl", []byte(`{"_id":"x1","text":"walrus tusks"}`+"\n"+`{"_id":"x2","text":"narwhal tusks"}`))
	f.ingest(t, kb, "c.jsonl", []byte(`{"_id":"x2","text":"narwhal tusks"}`))
	if got := f.find(t, f.ws.ID, []string{"docs"}, "tusks"); !slices.Equal(got, []string{"docs:x2"}) {
		t.Errorf("after JSONL re-ingest: %v, want [docs:x2]", got)
	}
	if got := f.counts(t, kb); got != [2]int{3, 3} {
		t.Errorf("counts = %v, want [3 3]", got)
	}
	// Re-ingesting an empty file removes the name.
	f.ingest(t, kb, "guide.txt", nil)
	if got := f.find(t, f.ws.ID, []string{"docs"}, "flamingos"); len(got) != 0 {
		t.Errorf("emptied file still found: %v", got)
	}
	srcs, err := f.svc.Sources(context.Background(), mustGet(t, f, kb))
	if err != nil {
		t.Fatal(err)
	}
	want := []SourceInfo{{"c.jsonl", 1, 1}, {"other.txt", 1, 1}}
	if diff := cmp.Diff(want, srcs); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
}

// jobStep is what one progress callback saw.
type jobStep struct {
	Status    store.IngestStatus
	FilesDone int
	Chunks    int
	Statuses  string
}

func stepOf(j store.IngestJob) jobStep {
	var st []string
	for _, f := range j.Files {
		st = append(st, f.Status)
	}
	return jobStep{j.Status, j.FilesDone, j.Chunks, strings.Join(st, ",")}
}

func (f *fixture) upload(t *testing.T, name string, data []byte) store.IngestFile {
	t.Helper()
	u, err := f.st.Uploads().Put(context.Background(), store.Upload{WorkspaceID: f.ws.ID, Name: name, Size: int64(len(data)), Data: data, ExpiresAt: f.clock().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return store.IngestFile{UploadID: u.ID, Name: name}
}

func TestRunJob(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	kb := f.create(t, "docs")
	files := []store.IngestFile{
		f.upload(t, "a.txt", []byte("Alpacas hum to communicate.")),
		f.upload(t, "broken.pdf", []byte("%PDF-1.7\nthis is not really a pdf\n%%EOF")),
		f.upload(t, "c.html", []byte("<p>Capybaras are the largest rodents.</p>")),
		f.upload(t, "blank.txt", []byte("  ")),
	}
	job, err := f.st.IngestJobs().Create(ctx, store.IngestJob{WorkspaceID: f.ws.ID, KnowledgeBaseID: kb.ID, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	var steps []jobStep
	if err := f.svc.RunJob(ctx, f.ws.ID, job.ID, func(j store.IngestJob) { steps = append(steps, stepOf(j)) }); err != nil {
		t.Fatal(err)
	}
	want := []jobStep{
		{store.IngestRunning, 0, 0, ",,,"},
		{store.IngestRunning, 1, 1, "ok,,,"},
		{store.IngestRunning, 2, 1, "ok,failed,,"},
		{store.IngestRunning, 3, 2, "ok,failed,ok,"},
		{store.IngestRunning, 4, 2, "ok,failed,ok,skipped"},
		// One file failed: partial, as the CLI exits 1 for it.
		{store.IngestPartial, 4, 2, "ok,failed,ok,skipped"},
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	got, err := f.st.IngestJobs().Get(ctx, f.ws.ID, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Files[1].Error == "" || got.Files[0].Chunks != 1 {
		t.Errorf("files = %+v; want an error on the PDF", got.Files)
	}
	if got := f.find(t, f.ws.ID, []string{"docs"}, "capybaras"); !slices.Equal(got, []string{"docs:c.html#0"}) {
		t.Errorf("search after job: %v", got)
	}
	// A final job is left alone.
	steps = nil
	if err := f.svc.RunJob(ctx, f.ws.ID, job.ID, func(j store.IngestJob) { steps = append(steps, stepOf(j)) }); err != nil || len(steps) != 0 {
		t.Errorf("rerun of a final job: %v, %d progress calls", err, len(steps))
	}
	if got := f.counts(t, kb); got != [2]int{2, 2} {
		t.Errorf("counts = %v, want [2 2]", got)
	}
}

func TestRunJobRetryAfterCrash(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	kb := f.create(t, "docs")
	a := f.upload(t, "a.txt", []byte("Alpacas hum to communicate."))
	b := f.upload(t, "b.txt", []byte("Bison roam the plains."))
	// A worker crashed after ingesting a.txt and recording it.
	f.ingest(t, kb, "a.txt", []byte("Alpacas hum to communicate."))
	a.Status, a.Documents, a.Chunks = FileOK, 1, 1
	job, err := f.st.IngestJobs().Create(ctx, store.IngestJob{WorkspaceID: f.ws.ID, KnowledgeBaseID: kb.ID, Files: []store.IngestFile{a, b}, Status: store.IngestRunning, FilesDone: 1, Chunks: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.RunJob(ctx, f.ws.ID, job.ID, nil); err != nil {
		t.Fatal(err)
	}
	got, err := f.st.IngestJobs().Get(ctx, f.ws.ID, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.IngestSucceeded || got.FilesDone != 2 || got.Chunks != 2 {
		t.Errorf("job = %s, %d files, %d chunks; want succeeded, 2, 2", got.Status, got.FilesDone, got.Chunks)
	}
	if c := f.counts(t, kb); c != [2]int{2, 2} {
		t.Errorf("counts = %v, want [2 2]", c)
	}
}

func TestRunJobFailures(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	kb := f.create(t, "docs")

	// Every file failing fails the job.
	bad := f.upload(t, "bad.pdf", []byte("%PDF-1.4 garbage"))
	gone := store.IngestFile{UploadID: "no-such-upload", Name: "gone.txt"}
	job, err := f.st.IngestJobs().Create(ctx, store.IngestJob{WorkspaceID: f.ws.ID, KnowledgeBaseID: kb.ID, Files: []store.IngestFile{bad, gone}})
	if err != nil {
		t.Fatal(err)
	}
	err = f.svc.RunJob(ctx, f.ws.ID, job.ID, nil)
	if err == nil || !strings.Contains(err.Error(), "all 2 files failed") {
		t.Errorf("RunJob = %v, want all files failed", err)
	}
	got, _ := f.st.IngestJobs().Get(ctx, f.ws.ID, job.ID)
	if got.Status != store.IngestFailed || got.Error == "" || !strings.Contains(got.Files[1].Error, "expired") {
		t.Errorf("job = %+v", got)
	}

	// A cancelled context (a worker stopping) leaves the job live with the
	// rest unprocessed, and the retry finishes it.
	ok := f.upload(t, "ok.txt", []byte("fine"))
	job, err = f.st.IngestJobs().Create(ctx, store.IngestJob{WorkspaceID: f.ws.ID, KnowledgeBaseID: kb.ID, Files: []store.IngestFile{ok}})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.svc.RunJob(cctx, f.ws.ID, job.ID, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled RunJob = %v", err)
	}
	// The cancelled Get may fail before the row is touched; when it got
	// through, the row must still be live.
	if got, _ := f.st.IngestJobs().Get(ctx, f.ws.ID, job.ID); got.Status.Final() {
		t.Errorf("cancelled job status %s, want it still live for the retry", got.Status)
	}
	if err := f.svc.RunJob(ctx, f.ws.ID, job.ID, nil); err != nil {
		t.Fatalf("retried RunJob = %v", err)
	}
	if got, _ := f.st.IngestJobs().Get(ctx, f.ws.ID, job.ID); got.Status != store.IngestSucceeded || got.Files[0].Status != "ok" {
		t.Errorf("retried job = %+v", got)
	}

	// A job whose base was deleted is gone with it.
	doomed := f.create(t, "doomed")
	job, err = f.st.IngestJobs().Create(ctx, store.IngestJob{WorkspaceID: f.ws.ID, KnowledgeBaseID: doomed.ID, Files: []store.IngestFile{f.upload(t, "x.txt", []byte("x"))}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Delete(ctx, f.ws.ID, "doomed"); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.RunJob(ctx, f.ws.ID, job.ID, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job of a deleted base: %v, want ErrNotFound", err)
	}
	if n := f.engineHits(t, doomed.IndexName, "x"); n != 0 {
		t.Errorf("the deleted base's index was re-created: %d hits", n)
	}
}

func TestSearchSeveralBases(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	animals := f.create(t, "animals")
	plants := f.create(t, "plants")
	f.ingest(t, animals, "a.jsonl", []byte(`{"_id":"lion","text":"The lion is a large cat that lives in groups."}
{"_id":"tiger","text":"The tiger is the largest cat species."}
{"_id":"cow","text":"Cows eat grass."}`))
	f.ingest(t, plants, "p.jsonl", []byte(`{"_id":"catnip","text":"Catnip is a plant that a cat loves."}
{"_id":"oak","text":"Oak trees grow slowly."}`))
	res, err := f.svc.Search(ctx, f.ws.ID, []string{"animals", plants.ID}, search.Query{Text: "cat", TopK: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range res.Hits {
		got = append(got, h.Metadata["kb"]+":"+h.ID)
		// RRF scores: at most one list's best 1/(60+1).
		if h.Score <= 0 || h.Score > 1.0/61+1e-12 {
			t.Errorf("hit %s score %v is not an RRF score", h.ID, h.Score)
		}
	}
	slices.Sort(got)
	if want := []string{"animals:lion", "animals:tiger", "plants:catnip"}; !slices.Equal(got, want) {
		t.Errorf("hits %v, want %v", got, want)
	}
	// The two first-ranked hits tie at 1/61 and come first.
	if len(res.Hits) == 3 && (res.Hits[2].Metadata["kb"] != "animals" || res.Hits[0].Score != res.Hits[1].Score) {
		t.Errorf("fusion order: %+v", res.Hits)
	}
	// The engine's own metadata is not modified.
	direct, _ := f.eng.Search(ctx, search.Query{Text: "cat", Indexes: []string{animals.IndexName}})
	for _, h := range direct.Hits {
		if _, ok := h.Metadata["kb"]; ok {
			t.Fatalf("engine metadata was modified: %v", h.Metadata)
		}
	}
	// Hybrid without an embedder answers from BM25 and says so.
	res, err = f.svc.Search(ctx, f.ws.ID, []string{"animals", "plants"}, search.Query{Text: "cat", Mode: search.ModeHybrid})
	if err != nil || res.Note == "" || res.Mode != search.ModeFulltext || len(res.Hits) != 3 {
		t.Errorf("hybrid without embedder = %+v, %v; want fulltext hits and a note", res, err)
	}
	// Top-k caps the fused list.
	res, _ = f.svc.Search(ctx, f.ws.ID, []string{"animals", "plants"}, search.Query{Text: "cat", TopK: 2})
	if len(res.Hits) != 2 {
		t.Errorf("TopK 2 gave %d hits", len(res.Hits))
	}
	// An unknown base is named.
	_, err = f.svc.Search(ctx, f.ws.ID, []string{"animals", "fungi"}, search.Query{Text: "cat"})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `"fungi"`) {
		t.Errorf("unknown base: %v", err)
	}
	if _, err := f.svc.Search(ctx, f.ws.ID, nil, search.Query{Text: "cat"}); err == nil {
		t.Error("no bases: want an error")
	}
	if _, err := f.svc.Search(ctx, f.ws.ID, []string{"animals"}, search.Query{Text: "cat", Mode: "fuzzy"}); err == nil {
		t.Error("bad mode: want an error")
	}
}

func TestWorkspaceIsolation(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	mine := f.create(t, "docs")
	f.ingest(t, mine, "secret.txt", []byte("The launch code is swordfish."))
	other := f.workspace(t, "other")
	theirs, err := f.svc.Create(ctx, other.ID, "docs", "same name, other workspace")
	if err != nil {
		t.Fatalf("same name in another workspace: %v", err)
	}
	if theirs.IndexName == mine.IndexName {
		t.Fatal("two workspaces share an index")
	}
	for _, key := range []string{mine.ID, "docs"} {
		res, err := f.svc.Search(ctx, other.ID, []string{key}, search.Query{Text: "swordfish"})
		if err == nil && len(res.Hits) > 0 {
			t.Errorf("workspace other found %s's document via %q", f.ws.Name, key)
		}
	}
	if _, err := f.svc.Resolve(ctx, other.ID, mine.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Resolve of another workspace's id: %v", err)
	}
	if err := f.svc.Delete(ctx, other.ID, mine.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete of another workspace's id: %v", err)
	}
	if got := f.find(t, f.ws.ID, []string{"docs"}, "swordfish"); len(got) != 1 {
		t.Errorf("own search: %v", got)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]search.Mode{"": search.ModeAuto, "auto": search.ModeAuto, "Hybrid": search.ModeHybrid, "fulltext": search.ModeFulltext, "vector": search.ModeVector} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("bm25"); err == nil || !strings.Contains(err.Error(), "fulltext") {
		t.Errorf("ParseMode(bm25) = %v", err)
	}
}

// TestConcurrentIngest ingests files into one base from several goroutines:
// the per-source records and counts must not lose an update.
func TestConcurrentIngest(t *testing.T) {
	f := newFixture(t)
	kb := f.create(t, "docs")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = f.svc.Ingest(context.Background(), kb, fmt.Sprintf("f%d.txt", i), []byte(fmt.Sprintf("File number %d mentions herons.", i)))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := f.counts(t, kb); got != [2]int{n, n} {
		t.Errorf("counts = %v, want [%d %d]", got, n, n)
	}
	srcs, err := f.svc.Sources(context.Background(), mustGet(t, f, kb))
	if err != nil || len(srcs) != n {
		t.Errorf("sources = %d (%v), want %d", len(srcs), err, n)
	}
	if got := f.find(t, f.ws.ID, []string{"docs"}, "herons"); len(got) != n {
		t.Errorf("found %d, want %d", len(got), n)
	}
}

// Ingest workers in several processes (here: several Services over one
// store, whose in-process locks do not see each other) record their files
// in the same base at once; no file's record or count may be lost.
func TestConcurrentIngestFromSeveralProcesses(t *testing.T) {
	f := newFixture(t)
	kb := f.create(t, "docs")
	const processes, perProcess = 4, 6
	svcs := []*Service{f.svc}
	for len(svcs) < processes {
		svc, err := New(Options{Store: f.st, Engine: f.eng, TempTTL: time.Hour, Now: f.clock})
		if err != nil {
			t.Fatal(err)
		}
		svcs = append(svcs, svc)
	}
	var wg sync.WaitGroup
	errs := make([]error, processes*perProcess)
	for p, svc := range svcs {
		for i := range perProcess {
			wg.Go(func() {
				n := p*perProcess + i
				_, errs[n] = svc.Ingest(context.Background(), kb, fmt.Sprintf("p%d-f%d.txt", p, i), []byte(fmt.Sprintf("File number %d mentions herons.", n)))
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	const n = processes * perProcess
	if got := f.counts(t, kb); got != [2]int{n, n} {
		t.Errorf("counts = %v, want [%d %d]", got, n, n)
	}
	srcs, err := f.svc.Sources(context.Background(), mustGet(t, f, kb))
	if err != nil || len(srcs) != n {
		t.Errorf("sources = %d (%v), want %d", len(srcs), err, n)
	}
}
