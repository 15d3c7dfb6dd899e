package kb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/store"
)

// Search answers q over the workspace's bases kbs (ids or names): one
// engine query per base, run in parallel, fused with Reciprocal Rank
// Fusion (k=60) when there are several, so that one base's BM25 scale does
// not drown another's. Each hit's Metadata gets "kb" = the base's name. The
// Result's Note joins the engines' notes (a hybrid query without an
// embedder, say). q.Indexes is ignored; an unknown base is an error naming
// it.
func (s *Service) Search(ctx context.Context, workspaceID string, kbs []string, q search.Query) (search.Result, error) {
	if len(kbs) == 0 {
		return search.Result{}, fmt.Errorf("kb: search: %w: name at least one knowledge base", store.ErrInvalid)
	}
	if err := q.Validate(); err != nil {
		return search.Result{}, fmt.Errorf("kb: %w", err)
	}
	var bases []store.KnowledgeBase
	seen := map[string]bool{}
	for _, name := range kbs {
		kb, err := s.Resolve(ctx, workspaceID, name)
		if err != nil {
			return search.Result{}, err
		}
		if !seen[kb.ID] {
			seen[kb.ID] = true
			bases = append(bases, kb)
		}
	}
	results := make([]search.Result, len(bases))
	g, gctx := errgroup.WithContext(ctx)
	for i, kb := range bases {
		g.Go(func() error {
			qi := q
			qi.Indexes = []string{kb.IndexName}
			res, err := s.eng.Search(gctx, qi)
			if err != nil {
				return fmt.Errorf("kb: search %q: %w", kb.Name, err)
			}
			for j, h := range res.Hits {
				// The engine's metadata is shared: label a copy.
				md := maps.Clone(h.Metadata)
				if md == nil {
					md = map[string]string{}
				}
				md["kb"] = kb.Name
				res.Hits[j].Metadata = md
			}
			results[i] = res
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return search.Result{}, err
	}
	if len(results) == 1 {
		return results[0], nil
	}
	out := search.Result{Mode: results[0].Mode}
	lists := make([][]search.Hit, len(results))
	var notes []string
	for i, r := range results {
		lists[i] = r.Hits
		if r.Mode != out.Mode {
			// Some bases fell back to full text and others did not: say
			// the weaker mode, and the note says why.
			out.Mode = search.ModeFulltext
		}
		if r.Note != "" && !slices.Contains(notes, r.Note) {
			notes = append(notes, r.Note)
		}
	}
	out.Note = strings.Join(notes, "; ")
	out.Hits = search.FuseRRF(search.DefaultRRFK, nil, lists...)
	topK := q.TopK
	if topK == 0 {
		topK = search.DefaultTopK
	}
	if len(out.Hits) > topK {
		out.Hits = out.Hits[:topK]
	}
	return out, nil
}

// ParseMode turns a user's mode ("", "auto", "fulltext", "vector",
// "hybrid") into a search.Mode.
func ParseMode(s string) (search.Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return search.ModeAuto, nil
	case "fulltext":
		return search.ModeFulltext, nil
	case "vector":
		return search.ModeVector, nil
	case "hybrid":
		return search.ModeHybrid, nil
	}
	return "", fmt.Errorf("kb: mode %q is unknown: use fulltext, vector, hybrid or auto", s)
}
