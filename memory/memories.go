package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/store"
)

// Engine is the search engine memories are indexed in: a search.Engine
// that can also drop a whole index (search/memory, search/sqlite and
// search/postgres all can). An engine that also reports an index's size
// (Len) lets Memories check an index against the store instead of
// rebuilding it once per process.
type Engine interface {
	search.Engine
	DeleteIndex(ctx context.Context, index string) error
}

// ErrNotOwner refuses a change to a memory that is visible to the caller
// but not theirs (another member's group memory).
var ErrNotOwner = errors.New("memory: only its owner may change or forget a memory")

// MemoryOptions configure Memories.
type MemoryOptions struct {
	// Logger receives index rebuilds. Default: discard.
	Logger *slog.Logger
	// Audit receives memory.remember, memory.update and memory.forget,
	// naming the actor, the memory and its scope, never its text. Nil
	// records nothing.
	Audit func(context.Context, store.AuditEvent)
}

// Memories keeps memory items and their search indexes; see the package
// documentation. It is safe for concurrent use.
type Memories struct {
	st     store.Store
	eng    Engine
	logger *slog.Logger
	audit  func(context.Context, store.AuditEvent)
	pii    piiCache

	// mu guards buckets.
	mu      sync.Mutex
	buckets map[string]*bucketState
}

// bucketState is one index: whether this process has checked it against
// the store, and the lock its writes and its rebuild take.
type bucketState struct {
	mu    sync.Mutex // guards ready; held while the index is written
	ready bool
}

// NewMemories returns the memories of st, indexed in eng.
func NewMemories(st store.Store, eng Engine, opts *MemoryOptions) (*Memories, error) {
	if st == nil || eng == nil {
		return nil, errors.New("memory: new memories: a store and a search engine are required")
	}
	m := &Memories{st: st, eng: eng, logger: slog.New(slog.DiscardHandler), buckets: map[string]*bucketState{}}
	if opts != nil && opts.Logger != nil {
		m.logger = opts.Logger
	}
	if opts != nil {
		m.audit = opts.Audit
	}
	return m, nil
}

// record audits action on row by p. The details name where the memory
// lives, never what it says: memories hold personal data.
func (m *Memories) record(ctx context.Context, p run.Principal, action string, row store.Memory) {
	if m.audit == nil {
		return
	}
	details, _ := json.Marshal(map[string]string{"scope": string(row.Scope), "visibility": string(row.Visibility), "source": row.Source})
	m.audit(ctx, store.AuditEvent{WorkspaceID: p.WorkspaceID, Actor: p.ActorString(), Action: action,
		Target: "memory:" + row.ID, Details: details})
}

// Note is a memory to remember.
type Note struct {
	// Scope is user (default), workspace or conversation.
	Scope store.MemoryScope
	// Visibility defaults to personal for user and conversation
	// memories, group for workspace ones.
	Visibility store.MemoryVisibility
	// ConversationID is the conversation of a conversation memory; it
	// must be the caller's.
	ConversationID string
	Text           string
	// Source says where it came from ("conversation:<id>", "run:<id>",
	// "api").
	Source string
}

// Masker turns text into what may be stored (the agent's PII policy,
// PIIMasker); an error refuses the memory. Nil stores the text as given.
type Masker func(text string) (string, error)

// Remember stores n for p, after mask.
func (m *Memories) Remember(ctx context.Context, p run.Principal, n Note, mask Masker) (store.Memory, error) {
	if n.Scope == "" {
		n.Scope = store.MemoryUser
	}
	if n.Visibility == "" {
		n.Visibility = store.MemoryPersonal
		if n.Scope == store.MemoryWorkspace {
			n.Visibility = store.MemoryGroup
		}
	}
	if n.Scope == store.MemoryConversation {
		if err := m.ownConversation(ctx, p, n.ConversationID); err != nil {
			return store.Memory{}, err
		}
	}
	text := sanitize(strings.TrimSpace(n.Text))
	if mask != nil {
		var err error
		if text, err = mask(text); err != nil {
			return store.Memory{}, err
		}
	}
	row := store.Memory{WorkspaceID: p.WorkspaceID, Scope: n.Scope, Visibility: n.Visibility,
		Owner: Owner(p), ConversationID: n.ConversationID, Text: text, Source: n.Source}
	if err := row.Validate(); err != nil {
		return store.Memory{}, fmt.Errorf("memory: remember: %w", err)
	}
	// Checked before the row is added, so that the check finds the index
	// in step rather than one short and rebuilds it.
	if err := m.ensure(ctx, bucketOf(row)); err != nil {
		return store.Memory{}, err
	}
	row, err := m.st.Memories().Create(ctx, row)
	if err != nil {
		return store.Memory{}, err
	}
	m.record(ctx, p, "memory.remember", row)
	if err := m.write(ctx, bucketOf(row), func(b bucket) error { return m.eng.Index(ctx, document(b, row)) }); err != nil {
		// The store has it: the next rebuild of the index finds it.
		return row, fmt.Errorf("memory: index memory %s: %w", row.ID, err)
	}
	return row, nil
}

// ownConversation reports ErrNotFound unless id is p's conversation.
func (m *Memories) ownConversation(ctx context.Context, p run.Principal, id string) error {
	if id == "" {
		return fmt.Errorf("memory: %w: a conversation memory needs a conversation", store.ErrInvalid)
	}
	cv, err := m.st.Conversations().Get(ctx, p.WorkspaceID, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && cv.Owner != Owner(p) {
		return unknownConversation(id)
	}
	return err
}

// DefaultRecallTopK is how many memories Recall returns when asked for 0.
const DefaultRecallTopK = 5

// RecallOptions tune Recall.
type RecallOptions struct {
	// ConversationID adds that conversation's memories (it must be the
	// caller's).
	ConversationID string
	// TopK is how many memories to return; 0 is DefaultRecallTopK.
	TopK int
}

// Recalled is a memory Recall found, best first. Its ID, Scope and Source
// are the citation.
type Recalled struct {
	store.Memory
	Score float64 `json:"score"`
}

// Recall searches the memories p may read — the workspace's, p's personal
// ones, and with o.ConversationID that conversation's — with the engine's
// hybrid search (full text alone without an embedder).
func (m *Memories) Recall(ctx context.Context, p run.Principal, query string, o RecallOptions) ([]Recalled, error) {
	k := o.TopK
	if k <= 0 {
		k = DefaultRecallTopK
	}
	owner := Owner(p)
	visible := []bucket{workspaceBucket(p.WorkspaceID), userBucket(p.WorkspaceID, owner)}
	if o.ConversationID != "" {
		if err := m.ownConversation(ctx, p, o.ConversationID); err != nil {
			return nil, err
		}
		visible = append(visible, conversationBucket(p.WorkspaceID, o.ConversationID))
	}
	names := make([]string, len(visible))
	for i, b := range visible {
		if err := m.ensure(ctx, b); err != nil {
			return nil, err
		}
		names[i] = b.name
	}
	// Hits of memories deleted since they were indexed are skipped below:
	// ask for a few more.
	res, err := m.eng.Search(ctx, search.Query{Text: query, TopK: k + 5, Indexes: names})
	if err != nil {
		return nil, fmt.Errorf("memory: recall: %w", err)
	}
	out := make([]Recalled, 0, k)
	for _, h := range res.Hits {
		if len(out) == k {
			break
		}
		row, err := m.st.Memories().Get(ctx, p.WorkspaceID, h.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		// The indexes are the caller's by construction; the check costs
		// nothing and holds even if an index were filled wrongly.
		if row.Visibility != store.MemoryGroup && row.Owner != owner {
			m.logger.Error("memory_index_leak_refused", "workspace_id", p.WorkspaceID, "index", h.Index, "memory_id", row.ID)
			continue
		}
		out = append(out, Recalled{Memory: row, Score: h.Score})
	}
	return out, nil
}

// Get returns the memory id when p may read it.
func (m *Memories) Get(ctx context.Context, p run.Principal, id string) (store.Memory, error) {
	row, err := m.st.Memories().Get(ctx, p.WorkspaceID, id)
	if err != nil {
		return store.Memory{}, err
	}
	if row.Visibility != store.MemoryGroup && row.Owner != Owner(p) {
		return store.Memory{}, fmt.Errorf("memory: get memory %s: %w", id, store.ErrNotFound)
	}
	return row, nil
}

// ListFilter narrows List.
type ListFilter struct {
	Scope          store.MemoryScope
	ConversationID string
	// Mine keeps p's own memories only.
	Mine   bool
	Limit  int
	Cursor string
}

// List returns a page of the memories p may read, newest first.
func (m *Memories) List(ctx context.Context, p run.Principal, f ListFilter) (store.MemoryPage, error) {
	sf := store.MemoryFilter{WorkspaceID: p.WorkspaceID, Scope: f.Scope, ConversationID: f.ConversationID,
		VisibleTo: Owner(p), Limit: f.Limit, Cursor: f.Cursor}
	if f.Mine {
		sf.Owner = sf.VisibleTo
	}
	return m.st.Memories().List(ctx, sf)
}

// Update replaces the text of p's memory id.
func (m *Memories) Update(ctx context.Context, p run.Principal, id, text string) (store.Memory, error) {
	if _, err := m.owned(ctx, p, id); err != nil {
		return store.Memory{}, err
	}
	row, err := m.st.Memories().Update(ctx, p.WorkspaceID, id, sanitize(strings.TrimSpace(text)))
	if err != nil {
		return store.Memory{}, err
	}
	m.record(ctx, p, "memory.update", row)
	if err := m.write(ctx, bucketOf(row), func(b bucket) error { return m.eng.Index(ctx, document(b, row)) }); err != nil {
		return row, fmt.Errorf("memory: index memory %s: %w", row.ID, err)
	}
	return row, nil
}

// Forget deletes p's memory id.
func (m *Memories) Forget(ctx context.Context, p run.Principal, id string) error {
	row, err := m.owned(ctx, p, id)
	if err != nil {
		return err
	}
	if err := m.st.Memories().Delete(ctx, p.WorkspaceID, id); err != nil {
		return err
	}
	m.record(ctx, p, "memory.forget", row)
	if err := m.write(ctx, bucketOf(row), func(b bucket) error { return m.eng.Delete(ctx, b.name, id) }); err != nil {
		// Forgotten all the same: Recall reads every hit back from the
		// store, so the stale entry is never returned.
		m.logger.Warn("memory_unindex_failed", "workspace_id", p.WorkspaceID, "memory_id", id, "error", err)
	}
	return nil
}

// owned returns p's memory id: ErrNotFound when p may not read it,
// ErrNotOwner when p may read but not change it.
func (m *Memories) owned(ctx context.Context, p run.Principal, id string) (store.Memory, error) {
	row, err := m.Get(ctx, p, id)
	if err == nil && row.Owner != Owner(p) {
		err = fmt.Errorf("%w: memory %s belongs to another member", ErrNotOwner, id)
	}
	return row, err
}

// DropConversation forgets the search index of a deleted conversation's
// memories (Conversations.Delete calls it; so does the retention pruner,
// which deletes conversations in the database). An unknown one is not an
// error.
func (m *Memories) DropConversation(ctx context.Context, workspaceID, id string) error {
	b := conversationBucket(workspaceID, id)
	m.mu.Lock()
	delete(m.buckets, b.name)
	m.mu.Unlock()
	if err := m.eng.DeleteIndex(ctx, b.name); err != nil {
		return fmt.Errorf("memory: drop index of conversation %s: %w", id, err)
	}
	return nil
}

// DropWorkspace forgets every search index of the workspace's memories
// (its shared one, each owner's, each conversation's), before the
// workspace is deleted: the rows go with the workspace, the indexes
// would keep their text.
func (m *Memories) DropWorkspace(ctx context.Context, workspaceID string) error {
	names := map[string]bool{workspaceBucket(workspaceID).name: true}
	f := store.MemoryFilter{WorkspaceID: workspaceID, Limit: store.MaxListLimit}
	for {
		page, err := m.st.Memories().List(ctx, f)
		if err != nil {
			return fmt.Errorf("memory: drop workspace %s: %w", workspaceID, err)
		}
		for _, row := range page.Memories {
			names[bucketOf(row).name] = true
		}
		if page.Next == "" {
			break
		}
		f.Cursor = page.Next
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(names)) {
		m.mu.Lock()
		delete(m.buckets, name)
		m.mu.Unlock()
		if err := m.eng.DeleteIndex(ctx, name); err != nil {
			errs = append(errs, fmt.Errorf("memory: drop index %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// bucket is one search index of memories with the store filter that
// selects the same memories.
type bucket struct {
	name   string
	filter store.MemoryFilter
}

// workspaceBucket holds what the whole workspace may recall: workspace
// memories and group-visible user memories.
func workspaceBucket(ws string) bucket {
	return bucket{name: "memory/" + ws + "/workspace", filter: store.MemoryFilter{WorkspaceID: ws, Visibility: store.MemoryGroup}}
}

// userBucket holds one owner's personal user memories.
func userBucket(ws, owner string) bucket {
	return bucket{name: "memory/" + ws + "/user/" + owner,
		filter: store.MemoryFilter{WorkspaceID: ws, Scope: store.MemoryUser, Visibility: store.MemoryPersonal, Owner: owner}}
}

// conversationBucket holds one conversation's memories.
func conversationBucket(ws, id string) bucket {
	return bucket{name: "memory/" + ws + "/conversation/" + id,
		filter: store.MemoryFilter{WorkspaceID: ws, Scope: store.MemoryConversation, ConversationID: id}}
}

// bucketOf is the index row belongs in.
func bucketOf(row store.Memory) bucket {
	switch {
	case row.Scope == store.MemoryConversation:
		return conversationBucket(row.WorkspaceID, row.ConversationID)
	case row.Visibility == store.MemoryGroup:
		return workspaceBucket(row.WorkspaceID)
	}
	return userBucket(row.WorkspaceID, row.Owner)
}

func document(b bucket, row store.Memory) search.Document {
	return search.Document{ID: row.ID, Index: b.name, Text: row.Text,
		Metadata: map[string]string{"scope": string(row.Scope), "owner": row.Owner}}
}

func (m *Memories) state(name string) *bucketState {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.buckets[name]
	if s == nil {
		s = &bucketState{}
		m.buckets[name] = s
	}
	return s
}

// ensure makes b's index agree with the store (see sync).
func (m *Memories) ensure(ctx context.Context, b bucket) error {
	return m.write(ctx, b, nil)
}

// write runs fn on b's index under its lock, after checking the index
// against the store once per process: an index the engine reports with
// as many documents as the store has rows is taken as is; any other is
// rebuilt from the store.
func (m *Memories) write(ctx context.Context, b bucket, fn func(bucket) error) error {
	s := m.state(b.name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ready {
		if err := m.sync(ctx, b); err != nil {
			return err
		}
		s.ready = true
	}
	if fn == nil {
		return nil
	}
	return fn(b)
}

// rebuildBatch is how many memories one Index call of a rebuild carries.
const rebuildBatch = store.MaxListLimit

func (m *Memories) sync(ctx context.Context, b bucket) error {
	want, err := m.st.Memories().Count(ctx, b.filter)
	if err != nil {
		return err
	}
	if n, ok, err := indexLen(ctx, m.eng, b.name); err != nil {
		return fmt.Errorf("memory: size of index %s: %w", b.name, err)
	} else if ok && n == want {
		return nil
	}
	if err := m.eng.DeleteIndex(ctx, b.name); err != nil {
		return fmt.Errorf("memory: rebuild index %s: %w", b.name, err)
	}
	f := b.filter
	f.Limit = rebuildBatch
	for {
		page, err := m.st.Memories().List(ctx, f)
		if err != nil {
			return err
		}
		docs := make([]search.Document, len(page.Memories))
		for i, row := range page.Memories {
			docs[i] = document(b, row)
		}
		if len(docs) > 0 {
			if err := m.eng.Index(ctx, docs...); err != nil {
				return fmt.Errorf("memory: rebuild index %s: %w", b.name, err)
			}
		}
		if page.Next == "" {
			break
		}
		f.Cursor = page.Next
	}
	m.logger.Info("memory_index_rebuilt", "workspace_id", b.filter.WorkspaceID, "index", b.name, "memories", want)
	return nil
}

// indexLen asks eng for the size of index when it can tell.
func indexLen(ctx context.Context, eng Engine, index string) (int, bool, error) {
	switch e := eng.(type) {
	case interface {
		Len(context.Context, string) (int, error)
	}:
		n, err := e.Len(ctx, index)
		return n, true, err
	case interface{ Len(string) int }:
		return e.Len(index), true, nil
	}
	return 0, false, nil
}
