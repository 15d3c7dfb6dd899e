package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/rag"
	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/extract"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
)

// Defaults of the upload and ingest API.
const (
	// DefaultMaxUploadBytes caps one uploaded file (Options.MaxUploadBytes).
	DefaultMaxUploadBytes = 32 << 20
	// UploadTTL is how long an upload is kept.
	UploadTTL = time.Hour
	// ingestPoll is how often an ingest progress stream reads its job row.
	// The row is the progress record, so a stream works whichever process
	// runs the job.
	ingestPoll = 200 * time.Millisecond
)

// registerKnowledge adds the knowledge-base and upload API. Every route
// answers 503 when the server has no knowledge service (Options.Knowledge).
func (s *Server) registerKnowledge() {
	routes := []struct {
		pattern string
		perm    identity.Permission
		h       http.HandlerFunc
	}{
		{"GET /api/kbs", identity.PermRead, s.listKBs},
		{"POST /api/kbs", identity.PermEdit, s.createKB},
		{"GET /api/kbs/{id}", identity.PermRead, s.getKB},
		{"PUT /api/kbs/{id}", identity.PermEdit, s.updateKB},
		{"PATCH /api/kbs/{id}", identity.PermEdit, s.updateKB},
		{"DELETE /api/kbs/{id}", identity.PermEdit, s.deleteKB},
		{"POST /api/kbs/{id}/search", identity.PermRead, s.searchKB},
		{"POST /api/kbs/{id}/ingest", identity.PermEdit, s.ingestKB},
		{"GET /api/kbs/{id}/sources", identity.PermRead, s.listKBSources},
		{"GET /api/kbs/{id}/jobs", identity.PermRead, s.listIngestJobs},
		{"GET /api/kbs/{id}/jobs/{job}", identity.PermRead, s.getIngestJob},
		{"GET /api/kbs/{id}/jobs/{job}/events", identity.PermRead, s.ingestJobEvents},
		{"POST /api/upload", identity.PermChat, s.upload},
		{"GET /api/uploads/{id}", identity.PermRead, s.getUpload},
	}
	for _, rt := range routes {
		s.handle(rt.pattern, rt.perm, s.needKnowledge(rt.h))
	}
}

func (s *Server) needKnowledge(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Knowledge == nil {
			apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "knowledge_not_configured",
				Message: "knowledge bases are not configured on this server: it was started without a search engine"})
			return
		}
		h(w, r)
	}
}

// kbError maps knowledge-base errors (package kb wraps the store's
// sentinels).
func kbError(w http.ResponseWriter, err error) { storeError(w, err) }

func (s *Server) listKBs(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Knowledge.List(r.Context(), workspace(r))
	if err != nil {
		kbError(w, err)
		return
	}
	if list == nil {
		list = []store.KnowledgeBase{}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": list})
}

type kbBody struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func (s *Server) createKB(w http.ResponseWriter, r *http.Request) {
	var b kbBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	k, err := s.opts.Knowledge.Create(r.Context(), workspace(r), strings.TrimSpace(b.Name), b.Description)
	if err != nil {
		kbError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, k)
}

func (s *Server) getKB(w http.ResponseWriter, r *http.Request) {
	k, err := s.opts.Knowledge.Resolve(r.Context(), workspace(r), r.PathValue("id"))
	if err != nil {
		kbError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, k)
}

func (s *Server) updateKB(w http.ResponseWriter, r *http.Request) {
	var ch kb.Changes
	if !s.decodeBody(w, r, &ch) {
		return
	}
	k, err := s.opts.Knowledge.Update(r.Context(), workspace(r), r.PathValue("id"), ch)
	if err != nil {
		kbError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, k)
}

func (s *Server) deleteKB(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Knowledge.Delete(r.Context(), workspace(r), r.PathValue("id")); err != nil {
		kbError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// searchBody is a search request; the path names the first knowledge base,
// knowledge_bases may add more.
type searchBody struct {
	Query          string            `json:"query"`
	Mode           search.Mode       `json:"mode"`
	TopK           int               `json:"top_k"`
	Filter         map[string]string `json:"filter"`
	KnowledgeBases []string          `json:"knowledge_bases"`
}

type hitBody struct {
	ID       string            `json:"id"`
	KB       string            `json:"kb,omitempty"`
	Score    float64           `json:"score"`
	Title    string            `json:"title,omitempty"`
	Text     string            `json:"text"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

func (s *Server) searchKB(w http.ResponseWriter, r *http.Request) {
	var b searchBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	q := search.Query{Text: b.Query, Mode: b.Mode, TopK: b.TopK, Filter: b.Filter}
	if err := q.Validate(); err != nil {
		apierr.Write(w, apierr.BadRequest("", err.Error()))
		return
	}
	kbs := append([]string{r.PathValue("id")}, b.KnowledgeBases...)
	res, err := s.opts.Knowledge.Search(r.Context(), workspace(r), kbs, q)
	if err != nil {
		kbError(w, err)
		return
	}
	hits := make([]hitBody, 0, len(res.Hits))
	for _, h := range res.Hits {
		hits = append(hits, hitBody{ID: h.ID, KB: h.Metadata["kb"], Score: h.Score, Title: h.Title, Text: h.Text, Metadata: h.Metadata})
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"hits": hits, "mode": res.Mode, "note": res.Note})
}

// readUploads stores the files of a multipart body (every part that has a
// file name) as uploads and returns them. It answers errors itself.
func (s *Server) readUploads(w http.ResponseWriter, r *http.Request) ([]store.Upload, bool) {
	limit := s.opts.MaxUploadBytes
	// The whole body may hold several files; each is checked on its own
	// below, the body as a whole against ten of them.
	mr, err := multipartReader(w, r, 10*limit+1<<20)
	if err != nil {
		apierr.Write(w, apierr.BadRequest("", err.Error()))
		return nil, false
	}
	var ups []store.Upload
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			uploadReadError(w, err)
			return nil, false
		}
		name := part.FileName()
		if name == "" {
			part.Close()
			continue
		}
		data, err := io.ReadAll(io.LimitReader(part, limit+1))
		part.Close()
		if err != nil {
			uploadReadError(w, err)
			return nil, false
		}
		if int64(len(data)) > limit {
			apierr.Write(w, &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest, Code: "file_too_large",
				Message: fmt.Sprintf("file %q is larger than the %d-byte upload limit", name, limit)})
			return nil, false
		}
		up, err := s.opts.Knowledge.PutUpload(r.Context(), store.Upload{
			WorkspaceID: workspace(r), Name: name, ContentType: part.Header.Get("Content-Type"),
			Size: int64(len(data)), Data: data, ExpiresAt: time.Now().Add(UploadTTL),
		})
		if err != nil {
			storeError(w, err)
			return nil, false
		}
		up.Data = nil
		ups = append(ups, up)
	}
	if len(ups) == 0 {
		apierr.Write(w, apierr.BadRequest("file", `no file in the request: send multipart/form-data with a part named "file" that has a filename`))
		return nil, false
	}
	return ups, true
}

func multipartReader(w http.ResponseWriter, r *http.Request, max int64) (*multipart.Reader, error) {
	r.Body = http.MaxBytesReader(w, r.Body, max)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, fmt.Errorf("request is not multipart/form-data (%v): send files as multipart/form-data parts named \"file\"", err)
	}
	return mr, nil
}

func uploadReadError(w http.ResponseWriter, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		apierr.Write(w, &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest, Code: "request_too_large",
			Message: fmt.Sprintf("request body is larger than %d bytes", mbe.Limit)})
		return
	}
	apierr.Write(w, apierr.BadRequest("", "read multipart body: "+err.Error()))
}

// uploadBody is the answer to POST /api/upload for one file.
type uploadBody struct {
	FileID      string    `json:"fileId"`
	Name        string    `json:"name"`
	Size        int64     `json:"size"`
	ContentType string    `json:"content_type,omitempty"`
	ExpiresAt   time.Time `json:"expires_at"`
}

func toUploadBody(u store.Upload) uploadBody {
	return uploadBody{FileID: u.ID, Name: u.Name, Size: u.Size, ContentType: u.ContentType, ExpiresAt: u.ExpiresAt}
}

// upload stores multipart files for an hour. One file answers its
// {fileId, ...}; several answer {files: [...]}.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	ups, ok := s.readUploads(w, r)
	if !ok {
		return
	}
	if len(ups) == 1 {
		httpapi.WriteJSON(w, http.StatusCreated, toUploadBody(ups[0]))
		return
	}
	out := make([]uploadBody, len(ups))
	for i, u := range ups {
		out[i] = toUploadBody(u)
	}
	httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"files": out})
}

// ingestKB queues an ingest job for the files of a multipart body, or for
// earlier uploads named by {"file_ids": [...]}, and streams its progress as
// SSE until it ends. With ?wait=false (or Accept: application/json) it
// answers 202 with the job at once; GET .../jobs/{job}/events streams it
// later.
func (s *Server) ingestKB(w http.ResponseWriter, r *http.Request) {
	ctx, ws := r.Context(), workspace(r)
	base, err := s.opts.Knowledge.Resolve(ctx, ws, r.PathValue("id"))
	if err != nil {
		kbError(w, err)
		return
	}
	var files []store.IngestFile
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		ups, ok := s.readUploads(w, r)
		if !ok {
			return
		}
		for _, u := range ups {
			files = append(files, store.IngestFile{UploadID: u.ID, Name: u.Name})
		}
	} else {
		var b struct {
			FileIDs []string `json:"file_ids"`
		}
		if !s.decodeBody(w, r, &b) {
			return
		}
		if len(b.FileIDs) == 0 {
			apierr.Write(w, apierr.BadRequest("file_ids", "file_ids is empty: send multipart/form-data files, or the fileIds of earlier uploads"))
			return
		}
		for i, id := range b.FileIDs {
			u, err := s.opts.Knowledge.UploadInfo(ctx, ws, id)
			if err != nil {
				if errors.Is(err, store.ErrNotFound) {
					apierr.Write(w, apierr.BadRequest(fmt.Sprintf("file_ids[%d]", i), fmt.Sprintf("upload %q does not exist or has expired (uploads are kept for %v)", id, UploadTTL)))
					return
				}
				storeError(w, err)
				return
			}
			files = append(files, store.IngestFile{UploadID: u.ID, Name: u.Name})
		}
	}
	job, err := s.opts.Knowledge.CreateJob(ctx, store.IngestJob{WorkspaceID: ws, KnowledgeBaseID: base.ID, Status: store.IngestQueued, Files: files})
	if err != nil {
		storeError(w, err)
		return
	}
	if err := s.opts.EnqueueIngest(ctx, ws, job.ID); err != nil {
		s.logger.ErrorContext(r.Context(), "ingest_enqueue_failed", "job_id", job.ID, "workspace_id", ws, "error", err)
		apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "queue_unavailable",
			Message: "the ingest job was recorded but could not be queued; retry the request"})
		return
	}
	if r.URL.Query().Get("wait") == "false" || (r.Header.Get("Accept") == "application/json") {
		httpapi.WriteJSON(w, http.StatusAccepted, toIngestJobBody(job))
		return
	}
	s.streamIngest(w, r, job)
}

// ingestJobBody is an ingest job in the API: the row, and the files that
// failed (a "partial" job lists them here; the files also carry their own
// status).
type ingestJobBody struct {
	store.IngestJob
	FailedFiles []failedFile `json:"failed_files,omitempty"`
}

type failedFile struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}

func toIngestJobBody(j store.IngestJob) ingestJobBody {
	b := ingestJobBody{IngestJob: j}
	for _, f := range j.Files {
		if f.Status == kb.FileFailed {
			b.FailedFiles = append(b.FailedFiles, failedFile{Name: f.Name, Error: f.Error})
		}
	}
	return b
}

// listKBSources lists the files ingested into a base, by name, with what
// each added.
func (s *Server) listKBSources(w http.ResponseWriter, r *http.Request) {
	ctx, ws := r.Context(), workspace(r)
	base, err := s.opts.Knowledge.Resolve(ctx, ws, r.PathValue("id"))
	if err != nil {
		kbError(w, err)
		return
	}
	srcs, err := s.opts.Knowledge.Sources(ctx, base)
	if err != nil {
		kbError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": srcs})
}

func (s *Server) listIngestJobs(w http.ResponseWriter, r *http.Request) {
	ctx, ws := r.Context(), workspace(r)
	base, err := s.opts.Knowledge.Resolve(ctx, ws, r.PathValue("id"))
	if err != nil {
		kbError(w, err)
		return
	}
	jobs, err := s.opts.Knowledge.Jobs(ctx, ws, base.ID)
	if err != nil {
		storeError(w, err)
		return
	}
	out := make([]ingestJobBody, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, toIngestJobBody(j))
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": out})
}

// ingestJob returns the job of the path, checking that it belongs to the
// path's knowledge base. It answers errors itself.
func (s *Server) ingestJob(w http.ResponseWriter, r *http.Request) (store.IngestJob, bool) {
	ctx, ws := r.Context(), workspace(r)
	base, err := s.opts.Knowledge.Resolve(ctx, ws, r.PathValue("id"))
	if err != nil {
		kbError(w, err)
		return store.IngestJob{}, false
	}
	job, err := s.opts.Knowledge.Job(ctx, ws, r.PathValue("job"))
	if err == nil && job.KnowledgeBaseID != base.ID {
		err = fmt.Errorf("%w: ingest job %q belongs to another knowledge base", store.ErrNotFound, r.PathValue("job"))
	}
	if err != nil {
		storeError(w, err)
		return store.IngestJob{}, false
	}
	return job, true
}

func (s *Server) getIngestJob(w http.ResponseWriter, r *http.Request) {
	if job, ok := s.ingestJob(w, r); ok {
		httpapi.WriteJSON(w, http.StatusOK, toIngestJobBody(job))
	}
}

func (s *Server) ingestJobEvents(w http.ResponseWriter, r *http.Request) {
	if job, ok := s.ingestJob(w, r); ok {
		s.streamIngest(w, r, job)
	}
}

// streamIngest sends the job as a "progress" event each time its row
// changes and ends with "done" (succeeded, or partial: its status says so
// and failed_files lists what failed) or "failed". Rows are polled, so the
// stream follows a job whichever process works it.
func (s *Server) streamIngest(w http.ResponseWriter, r *http.Request, job store.IngestJob) {
	ctx := r.Context()
	sw := sse.NewWriter(w)
	var mu sync.Mutex
	send := func(event string, j store.IngestJob) error {
		data, err := json.Marshal(toIngestJobBody(j))
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		return sw.WriteEvent(sse.Event{Event: event, Data: data})
	}
	keepAlive := time.NewTicker(s.opts.SSEKeepAlive)
	defer keepAlive.Stop()
	poll := time.NewTicker(ingestPoll)
	defer poll.Stop()
	last := ""
	for {
		stamp := string(job.Status) + "/" + strconv.Itoa(job.FilesDone) + "/" + strconv.Itoa(job.Chunks) + "/" + job.UpdatedAt.String()
		if stamp != last {
			last = stamp
			event := "progress"
			switch job.Status {
			case store.IngestSucceeded, store.IngestPartial:
				event = "done"
			case store.IngestFailed:
				event = "failed"
			}
			if err := send(event, job); err != nil {
				return
			}
			if job.Status.Final() {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-keepAlive.C:
			mu.Lock()
			err := sw.WriteComment("keep-alive")
			mu.Unlock()
			if err != nil {
				return
			}
			continue
		case <-poll.C:
		}
		next, err := s.opts.Knowledge.Job(ctx, job.WorkspaceID, job.ID)
		if err != nil {
			if ctx.Err() == nil {
				s.logger.WarnContext(r.Context(), "ingest_progress_read_failed", "job_id", job.ID, "error", err)
				_ = sw.WriteEvent(sse.Event{Event: "error", Data: mustJSON(map[string]string{"message": "the ingest job can no longer be read: " + err.Error()})})
			}
			return
		}
		job = next
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// Attachments implements openaiapi.Attachments over the uploads and
// the knowledge service: documents are ingested into one temporary
// knowledge base per set of files (reused while it lives, so the turns of
// a conversation that resend the same files do not ingest them again),
// images become image parts. One value serves every chat surface (/v1,
// /api/chat, AG-UI), so they share the temporary bases.
type Attachments struct {
	kbs *kb.Service

	mu    sync.Mutex
	bases map[string]tempBase // workspace and sorted file ids -> base
}

type tempBase struct {
	id      string
	expires time.Time
}

// reuseMargin is how long before its expiry a temporary base stops being
// reused for new turns, so a turn never searches a base being swept.
const reuseMargin = 5 * time.Minute

// NewAttachments returns the chat attachments of the uploads of k.
func NewAttachments(k *kb.Service) *Attachments { return &Attachments{kbs: k} }

// Attach implements openaiapi.Attachments.
func (a *Attachments) Attach(ctx context.Context, ws string, ids []string) (context.Context, []llm.Part, error) {
	var (
		images []llm.Part
		docs   []store.Upload
	)
	kbs := a.kbs
	missing := func(i int, id string, err error) error {
		if errors.Is(err, store.ErrNotFound) {
			return apierr.BadRequest("files", fmt.Sprintf("file %d (%q) does not exist or has expired: upload it again with POST /api/upload (uploads are kept for %v)", i+1, id, UploadTTL))
		}
		return err
	}
	// Documents are read without their content: a conversation resends
	// its files every turn, and only the first turn (or one after the
	// temporary base expired) needs the bytes, to ingest them.
	for i, id := range ids {
		u, err := kbs.UploadInfo(ctx, ws, id)
		if err != nil {
			return ctx, nil, missing(i, id, err)
		}
		if isImage(u) {
			if u, err = kbs.Upload(ctx, ws, id); err != nil {
				return ctx, nil, missing(i, id, err)
			}
			ct := u.ContentType
			if !strings.HasPrefix(ct, "image/") {
				ct = mime.TypeByExtension(strings.ToLower(filepath.Ext(u.Name)))
			}
			images = append(images, llm.Part{Type: llm.PartImage, ImageURL: "data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(u.Data)})
			continue
		}
		docs = append(docs, u)
	}
	if len(docs) == 0 {
		return ctx, images, nil
	}
	keyIDs := make([]string, len(docs))
	for i, d := range docs {
		keyIDs[i] = d.ID
	}
	slices.Sort(keyIDs)
	key := ws + "\x00" + strings.Join(keyIDs, ",")
	now := time.Now()
	a.mu.Lock()
	for k, b := range a.bases {
		if now.After(b.expires) {
			delete(a.bases, k)
		}
	}
	b, ok := a.bases[key]
	a.mu.Unlock()
	if ok && now.Before(b.expires.Add(-reuseMargin)) {
		return rag.WithKnowledgeBases(ctx, b.id), images, nil
	}
	base, err := kbs.CreateTemporary(ctx, ws)
	if err != nil {
		return ctx, nil, err
	}
	for _, d := range docs {
		id := d.ID
		if d, err = kbs.Upload(ctx, ws, id); err != nil {
			return ctx, nil, missing(slices.Index(ids, id), id, err)
		}
		if _, err := kbs.Ingest(ctx, base, d.Name, d.Data); err != nil {
			// The half-filled base expires on its own; say which file.
			if errors.Is(err, store.ErrInvalid) || errors.Is(err, extract.ErrUnsupported) || errors.Is(err, extract.ErrTooLarge) || errors.Is(err, extract.ErrZipBomb) || errors.Is(err, extract.ErrTimeout) {
				return ctx, nil, apierr.BadRequest("files", fmt.Sprintf("file %q cannot be read: %v", d.Name, err))
			}
			return ctx, nil, fmt.Errorf("index attached file %q: %w", d.Name, err)
		}
	}
	a.mu.Lock()
	if a.bases == nil {
		a.bases = make(map[string]tempBase)
	}
	a.bases[key] = tempBase{id: base.ID, expires: base.ExpiresAt}
	a.mu.Unlock()
	return rag.WithKnowledgeBases(ctx, base.ID), images, nil
}

// isImage reports whether an upload goes to the model as an image rather
// than through retrieval.
func isImage(u store.Upload) bool {
	if strings.HasPrefix(u.ContentType, "image/") {
		return true
	}
	switch strings.ToLower(filepath.Ext(u.Name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}
