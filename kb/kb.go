// Package kb manages knowledge bases: named collections of a workspace's
// documents that agents and users search. A base is a catalogue row in the
// store (store.KnowledgeBases) and a search index in a search engine
// (search/sqlite or search/postgres, in the store's database: the
// composition root hands both the same database.DB). The Service keeps the two consistent:
//
//	svc, err := kb.New(kb.Options{Store: st, Engine: eng})
//	base, err := svc.Create(ctx, ws.ID, "handbook", "HR policies")
//	res, err := svc.Ingest(ctx, base, "handbook.pdf", data)  // extract, chunk, index
//	hits, err := svc.Search(ctx, ws.ID, []string{"handbook"}, search.Query{Text: "leave"})
//
// Files are extracted with search/extract (txt, md, html, pdf, docx, csv,
// json, zip ...) and split with search/chunk; a ".jsonl" file of
// {"_id","title","text"} lines (the BEIR corpus format) is indexed one
// document per line under its _id, unchunked. Re-ingesting a file name
// replaces what that name produced before: the store keeps, per file name,
// which search documents it made (store.KnowledgeSource, see ingest.go).
//
// Uploaded files are ingested in the background by RunJob, which records
// per-file progress in a store.IngestJob. Temporary bases (chat uploads)
// expire after Options.TempTTL; Sweep removes them and expired uploads.
package kb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/chunk"
	"github.com/agentcraftlab/agentcraft/search/extract"
	"github.com/agentcraftlab/agentcraft/store"
)

// Engine is the search engine a Service indexes into: a search.Engine that
// can also drop a whole index (search/memory, search/sqlite and
// search/postgres all can).
type Engine interface {
	search.Engine
	// DeleteIndex removes index and all its documents; an unknown index is
	// not an error.
	DeleteIndex(ctx context.Context, index string) error
}

// DefaultTempTTL is how long a temporary base lives when Options.TempTTL is
// zero.
const DefaultTempTTL = time.Hour

// Options configure a Service. Store and Engine are required.
type Options struct {
	// Store holds the catalogue, ingest jobs and uploads.
	Store store.Store
	// Engine holds the chunks.
	Engine Engine
	// Chunk tunes splitting; the zero value means package chunk's defaults
	// (800 units, overlap 100).
	Chunk chunk.Options
	// Limits bound extraction; nil means package extract's defaults.
	Limits *extract.Limits
	// TempTTL is the lifetime of temporary bases. Default 1h.
	TempTTL time.Duration
	// Logger receives ingest job progress. Nil discards.
	Logger *slog.Logger
	// Now is the clock, for tests. Default time.Now.
	Now func() time.Time
	// Owner names this executor in the ingest jobs it claims, so that a
	// restarted process finds the jobs it was working (ResumeJobs). It
	// should survive a restart: default the AGENTCRAFT_WORKER_ID
	// environment variable, else the host name (as controlplane's runs).
	Owner string
}

// Service manages a store's knowledge bases. It is safe for concurrent use.
type Service struct {
	st     store.Store
	eng    Engine
	chunk  chunk.Options
	limits *extract.Limits
	ttl    time.Duration
	logger *slog.Logger
	now    func() time.Time
	owner  string

	mu    sync.Mutex             // guards locks and active
	locks map[string]*sync.Mutex // kb id → lock serialising writes to its settings and index
	// active holds the ids of the ingest jobs RunJob is working in this
	// process: a job requeued by ResumeJobs and its original queue job
	// must not run side by side.
	active map[string]bool
}

// New returns a Service.
func New(opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("kb: Options.Store is nil: pass the opened store")
	}
	if opts.Engine == nil {
		return nil, errors.New("kb: Options.Engine is nil: pass a search engine (search/sqlite or search/postgres on the store's database)")
	}
	if opts.TempTTL < 0 {
		return nil, fmt.Errorf("kb: Options.TempTTL is %v: use a positive duration or 0 for %v", opts.TempTTL, DefaultTempTTL)
	}
	s := &Service{
		st:     opts.Store,
		eng:    opts.Engine,
		chunk:  opts.Chunk,
		limits: opts.Limits,
		ttl:    opts.TempTTL,
		logger: opts.Logger,
		now:    opts.Now,
		owner:  opts.Owner,
		locks:  make(map[string]*sync.Mutex),
		active: make(map[string]bool),
	}
	if s.owner == "" {
		s.owner = os.Getenv("AGENTCRAFT_WORKER_ID")
	}
	if s.owner == "" {
		s.owner, _ = os.Hostname()
	}
	if s.owner == "" {
		s.owner = "agentcraft"
	}
	if s.ttl == 0 {
		s.ttl = DefaultTempTTL
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// IndexName is the search index of the persistent base id of a workspace.
func IndexName(workspaceID, kbID string) string { return workspaceID + "_kb_" + kbID }

// TempIndexName is the search index of a temporary base.
func TempIndexName(workspaceID, uuid string) string { return workspaceID + "_rag_" + uuid }

// MaxNameLen is the longest base name.
const MaxNameLen = 64

// ValidateName reports whether name can name a base: 1 to 64 letters,
// digits, '_', '-' or '.'.
func ValidateName(name string) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("kb: name %q: %w: use 1 to %d characters", name, store.ErrInvalid, MaxNameLen)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("kb: name %q: %w: use only letters, digits, '_', '-' and '.' (found %q)", name, store.ErrInvalid, r)
		}
	}
	return nil
}

// lock returns the mutex serialising writes to base id.
func (s *Service) lock(id string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.locks[id]
	if m == nil {
		m = new(sync.Mutex)
		s.locks[id] = m
	}
	return m
}

func (s *Service) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.locks, id)
}

// Create makes a persistent base. A taken name gives an error wrapping
// store.ErrConflict.
func (s *Service) Create(ctx context.Context, workspaceID, name, description string) (store.KnowledgeBase, error) {
	if err := ValidateName(name); err != nil {
		return store.KnowledgeBase{}, err
	}
	id := uuid.NewString()
	kb, err := s.st.KnowledgeBases().Create(ctx, store.KnowledgeBase{
		ID:          id,
		WorkspaceID: workspaceID,
		Name:        name,
		Description: description,
		IndexName:   IndexName(workspaceID, id),
	})
	if errors.Is(err, store.ErrConflict) {
		return store.KnowledgeBase{}, fmt.Errorf("kb: create %q: a knowledge base with that name exists: %w", name, err)
	}
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("kb: create %q: %w", name, err)
	}
	return kb, nil
}

// CreateTemporary makes a base with a generated name that expires TempTTL
// from now (for files uploaded into a chat). It is found by id only.
func (s *Service) CreateTemporary(ctx context.Context, workspaceID string) (store.KnowledgeBase, error) {
	id := uuid.NewString()
	kb, err := s.st.KnowledgeBases().Create(ctx, store.KnowledgeBase{
		ID:          id,
		WorkspaceID: workspaceID,
		Name:        "rag-" + id,
		IndexName:   TempIndexName(workspaceID, id),
		ExpiresAt:   s.now().Add(s.ttl),
	})
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("kb: create temporary base: %w", err)
	}
	return kb, nil
}

// Resolve finds the workspace's base by id, then by name. A missing base,
// or a temporary one past its expiry, gives an error naming it that wraps
// store.ErrNotFound.
func (s *Service) Resolve(ctx context.Context, workspaceID, idOrName string) (store.KnowledgeBase, error) {
	if strings.TrimSpace(idOrName) == "" {
		return store.KnowledgeBase{}, fmt.Errorf("kb: knowledge base name is empty: %w: name a base (see `agentcraft kb list`)", store.ErrInvalid)
	}
	kbs := s.st.KnowledgeBases()
	kb, err := kbs.Get(ctx, workspaceID, idOrName)
	if errors.Is(err, store.ErrNotFound) {
		kb, err = kbs.GetByName(ctx, workspaceID, idOrName)
	}
	if errors.Is(err, store.ErrNotFound) {
		return store.KnowledgeBase{}, fmt.Errorf("kb: knowledge base %q does not exist in this workspace: %w", idOrName, err)
	}
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("kb: find knowledge base %q: %w", idOrName, err)
	}
	if kb.Temporary() && !s.now().Before(kb.ExpiresAt) {
		return store.KnowledgeBase{}, fmt.Errorf("kb: knowledge base %q expired at %s: %w", idOrName, kb.ExpiresAt.Format(time.RFC3339), store.ErrNotFound)
	}
	return kb, nil
}

// List returns the workspace's persistent bases ordered by name.
func (s *Service) List(ctx context.Context, workspaceID string) ([]store.KnowledgeBase, error) {
	kbs, err := s.st.KnowledgeBases().List(ctx, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("kb: list: %w", err)
	}
	return kbs, nil
}

// Changes are the fields Update rewrites; nil fields keep their value.
type Changes struct {
	Name        *string `json:"name,omitempty"`
	Description *string `json:"description,omitempty"`
}

// Update renames a base or changes its description. Temporary bases cannot
// be renamed.
func (s *Service) Update(ctx context.Context, workspaceID, idOrName string, ch Changes) (store.KnowledgeBase, error) {
	kb, err := s.Resolve(ctx, workspaceID, idOrName)
	if err != nil {
		return store.KnowledgeBase{}, err
	}
	if ch.Name != nil {
		if err := ValidateName(*ch.Name); err != nil {
			return store.KnowledgeBase{}, err
		}
		if kb.Temporary() && *ch.Name != kb.Name {
			return store.KnowledgeBase{}, fmt.Errorf("kb: knowledge base %q is temporary: %w: its name cannot change", kb.Name, store.ErrInvalid)
		}
	}
	m := s.lock(kb.ID)
	m.Lock()
	defer m.Unlock()
	// Re-read under the lock so that settings written by a concurrent
	// ingest are kept.
	if kb, err = s.st.KnowledgeBases().Get(ctx, workspaceID, kb.ID); err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("kb: update %q: %w", idOrName, err)
	}
	if ch.Name != nil {
		kb.Name = *ch.Name
	}
	if ch.Description != nil {
		kb.Description = *ch.Description
	}
	kb, err = s.st.KnowledgeBases().Update(ctx, kb)
	if errors.Is(err, store.ErrConflict) {
		return store.KnowledgeBase{}, fmt.Errorf("kb: rename %q to %q: the name is taken: %w", idOrName, kb.Name, err)
	}
	if err != nil {
		return store.KnowledgeBase{}, fmt.Errorf("kb: update %q: %w", idOrName, err)
	}
	return kb, nil
}

// Delete removes a base and its search index. The index is dropped first:
// if dropping the row then fails, the base still exists (empty) and Delete
// can be retried, whereas the other order could leave an index no row
// names, which nothing would ever remove.
func (s *Service) Delete(ctx context.Context, workspaceID, idOrName string) error {
	kb, err := s.Resolve(ctx, workspaceID, idOrName)
	if err != nil {
		return err
	}
	return s.remove(ctx, kb)
}

func (s *Service) remove(ctx context.Context, kb store.KnowledgeBase) error {
	m := s.lock(kb.ID)
	m.Lock()
	defer m.Unlock()
	if err := s.eng.DeleteIndex(ctx, kb.IndexName); err != nil {
		return fmt.Errorf("kb: delete %q: drop search index: %w", kb.Name, err)
	}
	if err := s.st.KnowledgeBases().Delete(ctx, kb.WorkspaceID, kb.ID); err != nil {
		return fmt.Errorf("kb: delete %q: %w", kb.Name, err)
	}
	s.forget(kb.ID)
	return nil
}

// Sweep removes temporary bases whose expiry has passed (their indexes
// first) and expired uploads, and reports how many of each it removed.
// It carries on past a base it cannot remove and returns the errors joined.
func (s *Service) Sweep(ctx context.Context) (bases, uploads int, err error) {
	now := s.now()
	var errs []error
	failed := map[string]bool{}
	for {
		expired, err := s.st.KnowledgeBases().Expired(ctx, now, 100)
		if err != nil {
			errs = append(errs, fmt.Errorf("kb: sweep: list expired bases: %w", err))
			break
		}
		progress := false
		for _, kb := range expired {
			if failed[kb.ID] {
				continue
			}
			if err := s.remove(ctx, kb); err != nil && !errors.Is(err, store.ErrNotFound) {
				failed[kb.ID] = true
				errs = append(errs, fmt.Errorf("kb: sweep: %w", err))
				continue
			}
			bases++
			progress = true
		}
		if !progress || len(expired) < 100 {
			break
		}
	}
	uploads, err = s.st.Uploads().DeleteExpired(ctx, now)
	if err != nil {
		errs = append(errs, fmt.Errorf("kb: sweep: delete expired uploads: %w", err))
	}
	return bases, uploads, errors.Join(errs...)
}
