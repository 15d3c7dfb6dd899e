package kb

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/store"
)

// countingEngine counts the documents indexed per id.
type countingEngine struct {
	Engine
	mu      sync.Mutex
	indexed map[string]int // guarded by mu
}

func (e *countingEngine) Index(ctx context.Context, docs ...search.Document) error {
	e.mu.Lock()
	for _, d := range docs {
		e.indexed[d.ID]++
	}
	e.mu.Unlock()
	return e.Engine.Index(ctx, docs...)
}

// TestResumeJobs: a process killed while it worked an ingest job leaves
// the row running; at the next start ResumeJobs requeues the jobs this
// executor owned (all live jobs on SQLite), and the requeued job finishes
// without indexing again the file the dead attempt had already recorded.
func TestResumeJobs(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	eng := &countingEngine{Engine: f.eng, indexed: map[string]int{}}
	svc := func(owner string) *Service {
		s, err := New(Options{Store: f.st, Engine: eng, Now: f.clock, Owner: owner})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	w1 := svc("worker-1")
	kb := f.create(t, "docs")
	newJob := func(names ...string) store.IngestJob {
		t.Helper()
		var files []store.IngestFile
		for _, n := range names {
			files = append(files, f.upload(t, n, []byte("Text of "+n+" about alpacas.")))
		}
		j, err := f.st.IngestJobs().Create(ctx, store.IngestJob{WorkspaceID: f.ws.ID, KnowledgeBaseID: kb.ID, Files: files})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	// worker-1 died in the middle of mine: it had indexed and recorded
	// a.txt but not yet written the file's status to the job row.
	mine := newJob("a.txt", "b.txt")
	if _, err := f.st.IngestJobs().Claim(ctx, f.ws.ID, mine.ID, "worker-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := w1.Ingest(ctx, kb, "a.txt", []byte("Text of a.txt about alpacas.")); err != nil {
		t.Fatal(err)
	}
	theirs := newJob("c.txt")
	if _, err := f.st.IngestJobs().Claim(ctx, f.ws.ID, theirs.ID, "worker-2"); err != nil {
		t.Fatal(err)
	}
	queued := newJob("d.txt")

	var requeued []string
	requeue := func(_ context.Context, ws, id string) error {
		requeued = append(requeued, id)
		return w1.RunJob(ctx, ws, id, nil)
	}
	// Several executors (PostgreSQL): only worker-1's own running job.
	n, err := w1.ResumeJobs(ctx, false, requeue)
	if err != nil || n != 1 {
		t.Fatalf("ResumeJobs(worker-1) = %d, %v; want 1", n, err)
	}
	if diff := cmp.Diff([]string{mine.ID}, requeued); diff != "" {
		t.Errorf("requeued (-want +got):\n%s", diff)
	}
	got, err := f.st.IngestJobs().Get(ctx, f.ws.ID, mine.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jobStep{store.IngestSucceeded, 2, 2, "ok,ok"}, stepOf(got)); diff != "" {
		t.Errorf("resumed job (-want +got):\n%s", diff)
	}
	if eng.indexed["a.txt#0"] != 1 || eng.indexed["b.txt#0"] != 1 {
		t.Errorf("indexed = %v; want a.txt and b.txt once each (a.txt was recorded before the crash)", eng.indexed)
	}

	// One process (SQLite): every live job, whoever claimed it.
	requeued = nil
	if n, err := w1.ResumeJobs(ctx, true, requeue); err != nil || n != 2 {
		t.Fatalf("ResumeJobs(all) = %d, %v; want 2", n, err)
	}
	if diff := cmp.Diff([]string{theirs.ID, queued.ID}, requeued); diff != "" {
		t.Errorf("requeued (-want +got):\n%s", diff)
	}
	for _, id := range []string{theirs.ID, queued.ID} {
		if j, _ := f.st.IngestJobs().Get(ctx, f.ws.ID, id); j.Status != store.IngestSucceeded {
			t.Errorf("job %s = %s after ResumeJobs, want succeeded", id, j.Status)
		}
	}

}

// TestRunJobOncePerProcess: the requeued job and the original queue job
// of one ingest job reach RunJob together after a restart; only one works
// it.
func TestRunJobOncePerProcess(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	kb := f.create(t, "docs")
	job, err := f.st.IngestJobs().Create(ctx, store.IngestJob{WorkspaceID: f.ws.ID, KnowledgeBaseID: kb.ID,
		Files: []store.IngestFile{f.upload(t, "a.txt", []byte("alpacas"))}})
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	second := make(chan error, 1)
	err = f.svc.RunJob(ctx, f.ws.ID, job.ID, func(j store.IngestJob) {
		calls++
		if calls == 1 {
			// While the first is working, a second call returns at once.
			second <- f.svc.RunJob(ctx, f.ws.ID, job.ID, func(store.IngestJob) { t.Error("second RunJob wrote progress") })
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Errorf("second RunJob = %v, want nil", err)
	}
}
