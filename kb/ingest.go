package kb

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/chunk"
	"github.com/agentcraftlab/agentcraft/search/extract"
	"github.com/agentcraftlab/agentcraft/store"
)

// IngestResult says what one file produced.
type IngestResult struct {
	// Documents counts the file's documents: 1 for a plain file, one per
	// archive entry with text, one per line of a JSONL corpus.
	Documents int `json:"documents"`
	// Chunks counts the search documents indexed.
	Chunks int `json:"chunks"`
	// Warnings say what extraction skipped or guessed.
	Warnings []string `json:"warnings,omitempty"`
	// DuplicateOf names the source already in the base with the same
	// content, when the file was therefore not indexed again.
	DuplicateOf string `json:"duplicate_of,omitempty"`
}

// indexBatch is how many search documents go to the engine at once: large
// enough to amortise a transaction (and an embedding request), small enough
// to report progress and notice cancellation often.
const indexBatch = 128

// sourceEntry is the record of one ingested file (store.KnowledgeSource's
// Record). Chunked files record their chunk count per extracted document
// (chunk IDs are "DOC#0" ... "DOC#n-1", see chunk.Chunk.Document); JSONL
// corpora record their document IDs, which follow no pattern. Documents
// and Chunks repeat the source's counts.
type sourceEntry struct {
	Documents int            `json:"documents"`
	Chunks    int            `json:"chunks"`
	SHA256    string         `json:"sha256,omitempty"` // of the file's bytes
	Parts     map[string]int `json:"parts,omitempty"`
	IDs       []string       `json:"ids,omitempty"`
}

func (e sourceEntry) ids() []string {
	out := slices.Clone(e.IDs)
	for doc, n := range e.Parts {
		for i := range n {
			out = append(out, doc+"#"+strconv.Itoa(i))
		}
	}
	return out
}

// Sources lists the file names ingested into kb with what each produced,
// sorted by name.
func (s *Service) Sources(ctx context.Context, kb store.KnowledgeBase) ([]SourceInfo, error) {
	srcs, err := s.st.KnowledgeBases().ListSources(ctx, kb.WorkspaceID, kb.ID)
	if err != nil {
		return nil, fmt.Errorf("kb: sources of %q: %w", kb.Name, err)
	}
	out := make([]SourceInfo, 0, len(srcs))
	for _, src := range srcs {
		out = append(out, SourceInfo{Name: src.Name, Documents: src.Documents, Chunks: src.Chunks})
	}
	return out, nil
}

// SourceInfo is one ingested file of a base.
type SourceInfo struct {
	Name      string `json:"name"`
	Documents int    `json:"documents"`
	Chunks    int    `json:"chunks"`
}

// Ingest extracts, chunks and indexes one file into kb and updates the
// base's counts. Re-ingesting a name replaces what it produced before. A
// file without text is not an error: the result has no chunks and a
// warning. Names are normalized (NormalizeName). A file whose content is
// already in the base under another name (a folder ingested, then one of
// its files by name) is not indexed twice: the result names the source
// in DuplicateOf and has no chunks.
func (s *Service) Ingest(ctx context.Context, kb store.KnowledgeBase, name string, data []byte) (IngestResult, error) {
	return s.IngestProgress(ctx, kb, name, data, nil)
}

// IngestProgress is Ingest calling progress(indexed, total) after each
// batch of chunks sent to the engine (total is known once the file is
// extracted and split). progress may be nil.
func (s *Service) IngestProgress(ctx context.Context, kb store.KnowledgeBase, name string, data []byte, progress func(indexed, total int)) (IngestResult, error) {
	if strings.TrimSpace(name) == "" {
		return IngestResult{}, fmt.Errorf("kb: ingest: file name is empty: %w: name the file", store.ErrInvalid)
	}
	name = NormalizeName(name)
	sum := sha256.Sum256(data)
	var (
		res   IngestResult
		docs  []search.Document
		entry sourceEntry
		err   error
	)
	if strings.EqualFold(path.Ext(name), ".jsonl") {
		docs, err = parseJSONL(name, data, kb.IndexName)
		if err != nil {
			return IngestResult{}, fmt.Errorf("kb: ingest %s: %w", name, err)
		}
		res.Documents = len(docs)
		entry.IDs = make([]string, len(docs))
		for i, d := range docs {
			entry.IDs[i] = d.ID
		}
	} else {
		xdocs, err := extract.Isolated(ctx, name, bytes.NewReader(data), s.limits)
		if err != nil {
			return IngestResult{}, fmt.Errorf("kb: ingest %s: %w", name, err)
		}
		entry.Parts = map[string]int{}
		for _, xd := range xdocs {
			for _, w := range xd.Warnings {
				if xd.Name != name {
					w = xd.Name + ": " + w
				}
				res.Warnings = append(res.Warnings, w)
			}
			chunks := chunk.Split(xd, s.chunk)
			if len(chunks) == 0 {
				continue
			}
			res.Documents++
			entry.Parts[xd.Name] += len(chunks)
			for _, c := range chunks {
				docs = append(docs, c.Document(kb.IndexName))
			}
		}
	}
	res.Chunks = len(docs)
	entry.Documents, entry.Chunks = res.Documents, res.Chunks
	entry.SHA256 = hex.EncodeToString(sum[:])
	if res.Chunks == 0 {
		res.Warnings = append(res.Warnings, "no text found: nothing indexed")
	}

	m := s.lock(kb.ID)
	m.Lock()
	defer m.Unlock()
	// The caller's copy may be stale: read the base's current settings and
	// index name under the lock.
	fresh, err := s.st.KnowledgeBases().Get(ctx, kb.WorkspaceID, kb.ID)
	if err != nil {
		return IngestResult{}, fmt.Errorf("kb: ingest %s into %q: %w", name, kb.Name, err)
	}
	if fresh.IndexName != kb.IndexName {
		for i := range docs {
			docs[i].Index = fresh.IndexName
		}
	}
	var old sourceEntry
	prev, err := s.st.KnowledgeBases().GetSource(ctx, fresh.WorkspaceID, fresh.ID, name)
	hadOld := err == nil
	switch {
	case hadOld:
		if err := json.Unmarshal(prev.Record, &old); err != nil {
			return IngestResult{}, fmt.Errorf("kb: ingest %s into %q: the record of its last ingest: %w", name, kb.Name, err)
		}
	case !errors.Is(err, store.ErrNotFound):
		return IngestResult{}, fmt.Errorf("kb: ingest %s into %q: %w", name, kb.Name, err)
	}
	if res.Chunks > 0 {
		dup, err := s.sameContent(ctx, fresh, name, entry.SHA256)
		if err != nil {
			return IngestResult{}, fmt.Errorf("kb: ingest %s into %q: %w", name, kb.Name, err)
		}
		if dup != "" {
			return IngestResult{DuplicateOf: dup, Warnings: append(res.Warnings,
				fmt.Sprintf("same content as %q, already in the base: not indexed again", dup))}, nil
		}
	}
	oldIDs := make(map[string]bool)
	for _, id := range old.ids() {
		oldIDs[id] = true
	}
	for i := 0; i < len(docs); i += indexBatch {
		batch := docs[i:min(i+indexBatch, len(docs))]
		if err := s.eng.Index(ctx, batch...); err != nil {
			// Take back the documents this attempt added, so that the
			// index holds nothing the settings do not name. Documents
			// that replaced old ones cannot be restored; the next ingest
			// of the name replaces them again.
			var added []string
			for _, d := range docs[:i+len(batch)] {
				if !oldIDs[d.ID] {
					added = append(added, d.ID)
				}
			}
			if derr := s.eng.Delete(context.WithoutCancel(ctx), fresh.IndexName, added...); derr != nil {
				err = errors.Join(err, derr)
			}
			return IngestResult{}, fmt.Errorf("kb: ingest %s into %q: index: %w", name, kb.Name, err)
		}
		if progress != nil {
			progress(i+len(batch), len(docs))
		}
	}
	if hadOld {
		for _, d := range docs {
			delete(oldIDs, d.ID)
		}
		if stale := slices.Collect(maps.Keys(oldIDs)); len(stale) > 0 {
			if err := s.eng.Delete(ctx, fresh.IndexName, stale...); err != nil {
				return IngestResult{}, fmt.Errorf("kb: ingest %s into %q: delete the previous chunks: %w", name, kb.Name, err)
			}
		}
	}
	// Record the source; the store recounts the base from its sources in
	// the same transaction, so ingests of other files into this base, in
	// this process or another, lose nothing.
	if res.Chunks == 0 {
		err = s.st.KnowledgeBases().DeleteSource(ctx, fresh.WorkspaceID, fresh.ID, name)
		if errors.Is(err, store.ErrNotFound) && !hadOld {
			err = nil // nothing recorded, nothing to remove
		}
	} else {
		var rec []byte
		if rec, err = json.Marshal(entry); err == nil {
			err = s.st.KnowledgeBases().PutSource(ctx, fresh.WorkspaceID, store.KnowledgeSource{KnowledgeBaseID: fresh.ID,
				Name: name, Documents: entry.Documents, Chunks: entry.Chunks, Record: rec})
		}
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			if _, gerr := s.st.KnowledgeBases().Get(ctx, fresh.WorkspaceID, fresh.ID); errors.Is(gerr, store.ErrNotFound) {
				// Another process deleted the base while this one
				// indexed: drop the index this ingest re-created.
				err = errors.Join(err, s.eng.DeleteIndex(context.WithoutCancel(ctx), fresh.IndexName))
			}
		}
		return IngestResult{}, fmt.Errorf("kb: ingest %s into %q: save sources: %w", name, kb.Name, err)
	}
	return res, nil
}

// NormalizeName is the name a file is recorded under: slashes for
// separators, no "." or ".." steps and no leading "./", so that
// "docs\a.md", "./docs/a.md" and "docs//a.md" are one source.
func NormalizeName(name string) string {
	name = strings.TrimSpace(strings.ReplaceAll(name, "\\", "/"))
	if name == "" {
		return name
	}
	return path.Clean(name)
}

// sameContent returns the name of another source of kb whose file had the
// same bytes (sum), or "".
func (s *Service) sameContent(ctx context.Context, kb store.KnowledgeBase, name, sum string) (string, error) {
	srcs, err := s.st.KnowledgeBases().ListSources(ctx, kb.WorkspaceID, kb.ID)
	if err != nil {
		return "", err
	}
	for _, src := range srcs {
		if src.Name == name {
			continue
		}
		var rec struct {
			SHA256 string `json:"sha256"`
		}
		if json.Unmarshal(src.Record, &rec) == nil && rec.SHA256 == sum {
			return src.Name, nil
		}
	}
	return "", nil
}

// parseJSONL reads a BEIR-style corpus: one {"_id","title","text"} object
// per line. A repeated _id keeps its last line.
func parseJSONL(name string, data []byte, index string) ([]search.Document, error) {
	var docs []search.Document
	at := make(map[string]int)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec struct {
			ID    json.RawMessage `json:"_id"`
			Title string          `json:"title"`
			Text  string          `json:"text"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("line %d: %w: each line must be a JSON object {\"_id\",\"title\",\"text\"}", line, err)
		}
		id, err := jsonID(rec.ID)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		d := search.Document{ID: id, Index: index, Title: rec.Title, Text: rec.Text,
			Metadata: map[string]string{"source": name}}
		if i, ok := at[id]; ok {
			docs[i] = d
			continue
		}
		at[id] = len(docs)
		docs = append(docs, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return docs, nil
}

// jsonID accepts a string or a number as _id (some corpora write numbers).
func jsonID(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil && s != "" {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil && n != "" {
		return n.String(), nil
	}
	return "", errors.New(`"_id" is missing or empty: give every line a unique string "_id"`)
}
