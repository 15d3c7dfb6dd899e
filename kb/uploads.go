package kb

import (
	"context"

	"github.com/agentcraftlab/agentcraft/store"
)

// Uploads (POST /api/upload, chat attachments) and ingest jobs, for the
// surfaces: they reach the store through these, never directly. Store
// errors come back unwrapped, as the store gives them.

// PutUpload stores an uploaded file until its ExpiresAt.
func (s *Service) PutUpload(ctx context.Context, u store.Upload) (store.Upload, error) {
	return s.st.Uploads().Put(ctx, u)
}

// UploadInfo returns upload id without its content.
func (s *Service) UploadInfo(ctx context.Context, workspaceID, id string) (store.Upload, error) {
	return s.st.Uploads().Info(ctx, workspaceID, id)
}

// Upload returns upload id with its content.
func (s *Service) Upload(ctx context.Context, workspaceID, id string) (store.Upload, error) {
	return s.st.Uploads().Get(ctx, workspaceID, id)
}

// CreateJob records a queued ingest job; the caller queues it for RunJob.
func (s *Service) CreateJob(ctx context.Context, job store.IngestJob) (store.IngestJob, error) {
	return s.st.IngestJobs().Create(ctx, job)
}

// Jobs lists the ingest jobs of base kbID, newest first (at most 100).
func (s *Service) Jobs(ctx context.Context, workspaceID, kbID string) ([]store.IngestJob, error) {
	return s.st.IngestJobs().List(ctx, workspaceID, kbID, 0)
}

// Job returns ingest job id.
func (s *Service) Job(ctx context.Context, workspaceID, id string) (store.IngestJob, error) {
	return s.st.IngestJobs().Get(ctx, workspaceID, id)
}
