package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// knowledgeBases is KnowledgeBases on a Driver.
type knowledgeBases struct{ c Core }

func (r knowledgeBases) Create(ctx context.Context, kb KnowledgeBase) (KnowledgeBase, error) {
	if err := kb.Validate(); err != nil {
		return KnowledgeBase{}, r.c.errorf("create knowledge base: %w", err)
	}
	if kb.ID == "" {
		kb.ID = NewID()
	}
	kb.Settings = cloneJSON(kb.Settings)
	if !kb.ExpiresAt.IsZero() {
		kb.ExpiresAt = Timestamp(kb.ExpiresAt)
	}
	t := now()
	kb.CreatedAt, kb.UpdatedAt = t, t
	got, err := r.c.d.KnowledgeBaseInsert(ctx, &KnowledgeBaseInsertParams{Base: kb})
	if err != nil {
		return KnowledgeBase{}, r.c.errorf("create knowledge base %q: %w", kb.Name, err)
	}
	return got, nil
}

func (r knowledgeBases) Get(ctx context.Context, workspaceID, id string) (KnowledgeBase, error) {
	kb, err := r.c.d.KnowledgeBaseGet(ctx, workspaceID, id)
	if err != nil {
		return KnowledgeBase{}, r.c.errorf("get knowledge base %s: %w", id, err)
	}
	return kb, nil
}

func (r knowledgeBases) GetByName(ctx context.Context, workspaceID, name string) (KnowledgeBase, error) {
	kb, err := r.c.d.KnowledgeBaseGetByName(ctx, workspaceID, name)
	if err != nil {
		return KnowledgeBase{}, r.c.errorf("get knowledge base %q: %w", name, err)
	}
	return kb, nil
}

func (r knowledgeBases) List(ctx context.Context, workspaceID string) ([]KnowledgeBase, error) {
	out, err := r.c.d.KnowledgeBaseList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list knowledge bases: %w", err)
	}
	return out, nil
}

func (r knowledgeBases) Update(ctx context.Context, kb KnowledgeBase) (KnowledgeBase, error) {
	if err := kb.Validate(); err != nil {
		return KnowledgeBase{}, r.c.errorf("update knowledge base: %w", err)
	}
	got, err := r.c.d.KnowledgeBaseUpdate(ctx, &KnowledgeBaseUpdateParams{WorkspaceID: kb.WorkspaceID, ID: kb.ID,
		Name: kb.Name, Description: kb.Description, Now: now()})
	if err != nil {
		return KnowledgeBase{}, r.c.errorf("update knowledge base %s: %w", kb.ID, err)
	}
	return got, nil
}

// kbExists returns ErrNotFound unless the workspace holds the knowledge base.
func (c Core) kbExists(ctx context.Context, workspaceID, id string) error {
	ok, err := c.d.KnowledgeBaseExists(ctx, workspaceID, id)
	if err == nil && !ok {
		err = fmt.Errorf("%w: knowledge base %s does not exist in the workspace", ErrNotFound, id)
	}
	return err
}

func (r knowledgeBases) GetSource(ctx context.Context, workspaceID, kbID, name string) (KnowledgeSource, error) {
	src, err := r.c.d.KnowledgeSourceGet(ctx, workspaceID, kbID, name)
	if err != nil {
		return KnowledgeSource{}, r.c.errorf("get source %q of knowledge base %s: %w", name, kbID, err)
	}
	return src, nil
}

func (r knowledgeBases) PutSource(ctx context.Context, workspaceID string, src KnowledgeSource) error {
	if err := src.Validate(); err != nil {
		return r.c.errorf("put knowledge source: %w", err)
	}
	if err := r.c.d.KnowledgeSourcePut(ctx, &KnowledgeSourcePutParams{WorkspaceID: workspaceID, Source: src, Now: now()}); err != nil {
		return r.c.errorf("put source %q of knowledge base %s: %w", src.Name, src.KnowledgeBaseID, err)
	}
	return nil
}

func (r knowledgeBases) DeleteSource(ctx context.Context, workspaceID, kbID, name string) error {
	err := r.c.d.KnowledgeSourceDelete(ctx, &KnowledgeSourceDeleteParams{WorkspaceID: workspaceID, KnowledgeBaseID: kbID, Name: name, Now: now()})
	if err != nil {
		return r.c.errorf("delete source %q of knowledge base %s: %w", name, kbID, err)
	}
	return nil
}

func (r knowledgeBases) ListSources(ctx context.Context, workspaceID, kbID string) ([]KnowledgeSource, error) {
	if err := r.c.kbExists(ctx, workspaceID, kbID); err != nil {
		return nil, r.c.errorf("list sources of knowledge base %s: %w", kbID, err)
	}
	out, err := r.c.d.KnowledgeSourceList(ctx, kbID)
	if err != nil {
		return nil, r.c.errorf("list sources of knowledge base %s: %w", kbID, err)
	}
	return out, nil
}

func (r knowledgeBases) Delete(ctx context.Context, workspaceID, id string) error {
	if err := r.c.d.KnowledgeBaseDelete(ctx, workspaceID, id); err != nil {
		return r.c.errorf("delete knowledge base %s: %w", id, err)
	}
	return nil
}

func (r knowledgeBases) Expired(ctx context.Context, at time.Time, limit int) ([]KnowledgeBase, error) {
	if limit <= 0 {
		limit = 100
	}
	out, err := r.c.d.KnowledgeBaseListExpired(ctx, &KnowledgeBaseListExpiredParams{Now: Timestamp(at), Limit: limit})
	if err != nil {
		return nil, r.c.errorf("list expired knowledge bases: %w", err)
	}
	return out, nil
}

// ingestJobs is IngestJobs on a Driver.
type ingestJobs struct{ c Core }

func (r ingestJobs) Create(ctx context.Context, j IngestJob) (IngestJob, error) {
	if j.Status == "" {
		j.Status = IngestQueued
	}
	if err := j.Validate(); err != nil {
		return IngestJob{}, r.c.errorf("create ingest job: %w", err)
	}
	if j.ID == "" {
		j.ID = NewID()
	}
	files, err := json.Marshal(j.Files)
	if err != nil {
		return IngestJob{}, r.c.errorf("create ingest job: encode files: %w", err)
	}
	j.Files = append([]IngestFile(nil), j.Files...)
	t := now()
	j.CreatedAt, j.UpdatedAt = t, t
	got, err := r.c.d.IngestJobInsert(ctx, &IngestJobParams{Job: j, Files: files})
	if isNotFound(err) {
		err = fmt.Errorf("%w: knowledge base %s does not exist in the workspace", ErrNotFound, j.KnowledgeBaseID)
	}
	if err != nil {
		return IngestJob{}, r.c.errorf("create ingest job: %w", err)
	}
	return got, nil
}

func (r ingestJobs) Get(ctx context.Context, workspaceID, id string) (IngestJob, error) {
	j, err := r.c.d.IngestJobGet(ctx, workspaceID, id)
	if err != nil {
		return IngestJob{}, r.c.errorf("get ingest job %s: %w", id, err)
	}
	return j, nil
}

// Update leaves a job in a final state untouched: a worker that lost its
// lease cannot overwrite the outcome another one recorded.
func (r ingestJobs) Update(ctx context.Context, j IngestJob) (IngestJob, error) {
	if err := j.Validate(); err != nil {
		return IngestJob{}, r.c.errorf("update ingest job: %w", err)
	}
	files, err := json.Marshal(j.Files)
	if err != nil {
		return IngestJob{}, r.c.errorf("update ingest job %s: encode files: %w", j.ID, err)
	}
	j.UpdatedAt = now()
	got, err := r.c.d.IngestJobUpdate(ctx, &IngestJobParams{Job: j, Files: files})
	if isNotFound(err) {
		// Gone, or final: tell which.
		cur, gerr := r.c.d.IngestJobGet(ctx, j.WorkspaceID, j.ID)
		if gerr != nil {
			return IngestJob{}, r.c.errorf("update ingest job %s: %w", j.ID, ErrNotFound)
		}
		return IngestJob{}, r.c.errorf("update ingest job %s: %w: job is already %s", j.ID, ErrConflict, cur.Status)
	}
	if err != nil {
		return IngestJob{}, r.c.errorf("update ingest job %s: %w", j.ID, err)
	}
	return got, nil
}

func (r ingestJobs) List(ctx context.Context, workspaceID, kbID string, limit int) ([]IngestJob, error) {
	if limit <= 0 {
		limit = 100
	}
	out, err := r.c.d.IngestJobList(ctx, &IngestJobListParams{WorkspaceID: workspaceID, KnowledgeBaseID: kbID, Limit: limit})
	if err == nil && len(out) == 0 {
		err = r.c.kbExists(ctx, workspaceID, kbID)
	}
	if err != nil {
		return nil, r.c.errorf("list ingest jobs of knowledge base %s: %w", kbID, err)
	}
	return out, nil
}
