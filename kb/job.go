package kb

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
)

// Per-file states of store.IngestFile.Status.
const (
	FileOK      = "ok"
	FileSkipped = "skipped"
	FileFailed  = "failed"
)

// RunJob processes the queued ingest job jobID: it claims the job for
// this executor (Options.Owner) and marks it running, ingests each upload
// in turn, rewrites the job row after every file (FilesDone, Chunks, the
// file's status and error) and calls onProgress (which may be nil) with
// each row written, the first and last included.
//
// The job ends succeeded when every file was ingested or skipped, partial
// when some failed and others did not (every file has its own status; the
// job's Error counts the failures and names the first), and failed when
// every file failed or the base is gone. When ctx ends
// first (the worker stops), the job stays running with the files done so
// far and RunJob returns ctx's error, so the queue's retry (or ResumeJobs
// after a restart) finishes it. A job already final is left alone, and so
// is one RunJob is already working in this process.
//
// Files that already have a status are not processed again, and FilesDone
// and Chunks are recomputed from the files, so a job retried after a crash
// neither ingests nor counts a file twice. A file the crashed attempt
// indexed and recorded in the base's sources (store.KnowledgeSource)
// before it could mark the file done is taken from that record, not
// indexed again.
func (s *Service) RunJob(ctx context.Context, workspaceID, jobID string, onProgress func(store.IngestJob)) error {
	s.mu.Lock()
	if s.active[jobID] {
		s.mu.Unlock()
		return nil
	}
	s.active[jobID] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.active, jobID)
		s.mu.Unlock()
	}()

	jobs := s.st.IngestJobs()
	job, err := jobs.Get(ctx, workspaceID, jobID)
	if err != nil {
		return fmt.Errorf("kb: ingest job %s: %w", jobID, err)
	}
	if job.Status.Final() {
		return nil
	}
	// A job found running was begun by an attempt that did not finish.
	resumed := job.Status == store.IngestRunning
	save := func(j store.IngestJob) (store.IngestJob, error) {
		// Persist progress even when ctx was cancelled: the row must say
		// how far the job got.
		saved, err := jobs.Update(context.WithoutCancel(ctx), j)
		if err != nil {
			return j, fmt.Errorf("kb: ingest job %s: save progress: %w", jobID, err)
		}
		if onProgress != nil {
			onProgress(saved)
		}
		return saved, nil
	}
	// interrupted keeps the job live when ctx ends (a worker shutting
	// down): the queue makes the job available again and the next attempt
	// continues with the files that have no status yet.
	interrupted := func(j store.IngestJob, cause error) error {
		if _, err := save(j); err != nil {
			return errors.Join(cause, err)
		}
		return cause
	}
	fail := func(j store.IngestJob, cause error) error {
		j.Status = store.IngestFailed
		j.Error = cause.Error()
		if _, err := save(j); err != nil {
			return errors.Join(cause, err)
		}
		return cause
	}
	logger := s.logger.With("workspace_id", workspaceID, "job_id", jobID, "kb_id", job.KnowledgeBaseID)

	kb, err := s.st.KnowledgeBases().Get(ctx, workspaceID, job.KnowledgeBaseID)
	if errors.Is(err, store.ErrNotFound) {
		return fail(job, fmt.Errorf("kb: ingest job %s: knowledge base %s was deleted: %w", jobID, job.KnowledgeBaseID, err))
	}
	if err != nil {
		// Perhaps transient: leave the job as it is for a retry.
		return fmt.Errorf("kb: ingest job %s: knowledge base %s: %w", jobID, job.KnowledgeBaseID, err)
	}
	claimed, err := jobs.Claim(ctx, workspaceID, jobID, s.owner)
	if errors.Is(err, store.ErrConflict) {
		return nil // finished meanwhile (another executor)
	}
	if err != nil {
		return fmt.Errorf("kb: ingest job %s: claim: %w", jobID, err)
	}
	job = claimed
	job.Error = ""
	tally(&job)
	if job, err = save(job); err != nil {
		return err
	}
	logger.Info("kb_ingest_started", "files", len(job.Files), "resumed", resumed)
	for i := range job.Files {
		f := &job.Files[i]
		if f.Status != "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return interrupted(job, fmt.Errorf("kb: ingest job %s: stopped after %d of %d files: %w", jobID, job.FilesDone, len(job.Files), err))
		}
		if resumed && s.recorded(ctx, kb, job, f) {
			logger.Info("kb_ingest_file_recovered", "file", f.Name)
			tally(&job)
			if job, err = save(job); err != nil {
				return err
			}
			continue
		}
		res, err := s.ingestUpload(ctx, kb, f)
		switch {
		case err == nil && res.DuplicateOf != "":
			f.Status, f.Error = FileSkipped, fmt.Sprintf("same content as %q, already in the base", res.DuplicateOf)
		case err == nil && res.Chunks == 0:
			f.Status, f.Error = FileSkipped, "no text found"
		case err == nil:
			f.Status, f.Error = FileOK, ""
			f.Documents, f.Chunks = res.Documents, res.Chunks
		case ctx.Err() != nil:
			// Not the file's fault: leave it unprocessed so a rerun
			// picks it up.
			return interrupted(job, fmt.Errorf("kb: ingest job %s: stopped at %s: %w", jobID, f.Name, ctx.Err()))
		case errors.Is(err, store.ErrNotFound) && s.gone(ctx, kb):
			return fail(job, fmt.Errorf("kb: ingest job %s: knowledge base %q was deleted: %w", jobID, kb.Name, store.ErrNotFound))
		default:
			f.Status, f.Error = FileFailed, err.Error()
			logger.Warn("kb_ingest_file_failed", "file", f.Name, "error", err)
		}
		tally(&job)
		if job, err = save(job); err != nil {
			return err
		}
	}
	failed := 0
	var first string
	for _, f := range job.Files {
		if f.Status == FileFailed {
			failed++
			if first == "" {
				first = f.Name + ": " + f.Error
			}
		}
	}
	if failed == len(job.Files) {
		return fail(job, fmt.Errorf("kb: ingest job %s: all %d files failed; first: %s", jobID, failed, first))
	}
	job.Status = store.IngestSucceeded
	if failed > 0 {
		// As the CLI exits 1 for the same input: the caller must see
		// that files are missing, not a plain success.
		job.Status = store.IngestPartial
		job.Error = fmt.Sprintf("%d of %d files failed; first: %s", failed, len(job.Files), first)
	}
	if _, err := save(job); err != nil {
		return err
	}
	logger.Info("kb_ingest_finished", "status", job.Status, "files", len(job.Files), "failed", failed, "chunks", job.Chunks)
	return nil
}

// recorded reports whether f was indexed by an earlier attempt of job (its
// source was recorded after the job was created) and if so marks it done
// with the recorded counts.
func (s *Service) recorded(ctx context.Context, kb store.KnowledgeBase, job store.IngestJob, f *store.IngestFile) bool {
	src, err := s.st.KnowledgeBases().GetSource(ctx, kb.WorkspaceID, kb.ID, NormalizeName(f.Name))
	if err != nil || src.UpdatedAt.Before(job.CreatedAt) {
		return false
	}
	f.Status, f.Error = FileOK, ""
	f.Documents, f.Chunks = src.Documents, src.Chunks
	return true
}

// ResumeJobs requeues, at start, the live ingest jobs this executor
// (Options.Owner) was working when it stopped, and every live job when
// all is set (a single process on SQLite, which owns every job), instead
// of leaving them to the queue's rescuer, which waits for the job timeout
// and more. requeue must enqueue the job anew even though the queue may
// still count its old job as running. It returns how many it requeued.
func (s *Service) ResumeJobs(ctx context.Context, all bool, requeue func(ctx context.Context, workspaceID, jobID string) error) (int, error) {
	live, err := s.st.IngestJobs().Live(ctx)
	if err != nil {
		return 0, fmt.Errorf("kb: resume ingest jobs: %w", err)
	}
	n := 0
	for _, j := range live {
		if !all && (j.Status != store.IngestRunning || j.Owner != s.owner) {
			continue
		}
		if err := requeue(ctx, j.WorkspaceID, j.ID); err != nil {
			return n, fmt.Errorf("kb: resume ingest job %s: %w", j.ID, err)
		}
		s.logger.Info("kb_ingest_resumed", "workspace_id", j.WorkspaceID, "job_id", j.ID, "status", j.Status)
		n++
	}
	return n, nil
}

// ingestUpload reads f's upload and ingests it.
func (s *Service) ingestUpload(ctx context.Context, kb store.KnowledgeBase, f *store.IngestFile) (IngestResult, error) {
	up, err := s.st.Uploads().Get(ctx, kb.WorkspaceID, f.UploadID)
	if errors.Is(err, store.ErrNotFound) {
		return IngestResult{}, fmt.Errorf("upload %s (%s) has expired or was deleted: upload the file again", f.UploadID, f.Name)
	}
	if err != nil {
		return IngestResult{}, fmt.Errorf("read upload %s: %w", f.UploadID, err)
	}
	name := f.Name
	if name == "" {
		name = up.Name
	}
	return s.Ingest(ctx, kb, name, up.Data)
}

// gone reports whether kb no longer exists.
func (s *Service) gone(ctx context.Context, kb store.KnowledgeBase) bool {
	_, err := s.st.KnowledgeBases().Get(ctx, kb.WorkspaceID, kb.ID)
	return errors.Is(err, store.ErrNotFound)
}

// tally recomputes FilesDone and Chunks from the files.
func tally(j *store.IngestJob) {
	j.FilesDone, j.Chunks = 0, 0
	for _, f := range j.Files {
		if f.Status != "" {
			j.FilesDone++
			j.Chunks += f.Chunks
		}
	}
}
