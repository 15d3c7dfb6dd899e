package sqlite

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// BenchmarkIngestProgress measures the two writes an ingest worker makes
// after every file: the job's progress (IngestJobs.Update) and the file's
// source record with the base's recount (KnowledgeBases.PutSource). Adhoc
// runs the job update unprepared, the peer that justifies preparing it.
func BenchmarkIngestProgress(b *testing.B) {
	ctx := context.Background()
	st, w := benchStore(b)
	kb, err := st.KnowledgeBases().Create(ctx, store.KnowledgeBase{WorkspaceID: w.ID, Name: "docs", IndexName: "ix"})
	if err != nil {
		b.Fatal(err)
	}
	files := make([]store.IngestFile, 20)
	for i := range files {
		files[i] = store.IngestFile{UploadID: store.NewID(), Name: "chapter.pdf"}
	}
	job, err := st.IngestJobs().Create(ctx, store.IngestJob{WorkspaceID: w.ID, KnowledgeBaseID: kb.ID, Files: files})
	if err != nil {
		b.Fatal(err)
	}
	job.Status = store.IngestRunning

	record := func(ctx context.Context, j store.IngestJob) error {
		return st.KnowledgeBases().PutSource(ctx, j.WorkspaceID, store.KnowledgeSource{KnowledgeBaseID: j.KnowledgeBaseID,
			Name: "chapter-" + strconv.Itoa(j.FilesDone) + ".pdf", Documents: 1, Chunks: 12,
			Record: json.RawMessage(`{"parts":{"chapter.pdf":12}}`)})
	}
	prepared := func(ctx context.Context, j store.IngestJob) error {
		if _, err := st.IngestJobs().Update(ctx, j); err != nil {
			return err
		}
		return record(ctx, j)
	}
	adhoc := func(ctx context.Context, j store.IngestJob) error {
		enc, err := json.Marshal(j.Files)
		if err != nil {
			return err
		}
		if _, err := scanIngestJob(st.writer.QueryRowContext(ctx, updateIngestJob,
			j.Status, string(enc), j.FilesDone, j.Chunks, j.Error, micros(time.Now()), j.WorkspaceID, j.ID)); err != nil {
			return err
		}
		return record(ctx, j)
	}
	for _, bm := range []struct {
		name string
		step func(context.Context, store.IngestJob) error
	}{
		{"Prepared", prepared},
		{"Adhoc", adhoc},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				j := job
				j.FilesDone = i % len(files)
				j.Chunks = 12 * i
				if err := bm.step(ctx, j); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
