package rag

import (
	"context"
	"slices"
	"sync"
)

type basesKey struct{}

// WithKnowledgeBases returns a context whose requests also search the bases
// ids (names or ids), on top of the bases the decorator was configured with
// and any an outer WithKnowledgeBases added. The server uses it for files
// uploaded into one chat.
func WithKnowledgeBases(ctx context.Context, ids ...string) context.Context {
	if len(ids) == 0 {
		return ctx
	}
	return context.WithValue(ctx, basesKey{}, merge(KnowledgeBasesFrom(ctx), ids))
}

// KnowledgeBasesFrom returns the bases WithKnowledgeBases put in ctx.
func KnowledgeBasesFrom(ctx context.Context) []string {
	ids, _ := ctx.Value(basesKey{}).([]string)
	return slices.Clip(ids)
}

type collectorKey struct{}

// Collector receives the citations of the requests made with its context.
// It is safe for concurrent use.
type Collector struct {
	mu    sync.Mutex // guards cites
	cites []Citation
}

// WithCollector returns a context carrying a new Collector, and the
// Collector. After a model call with that context, Citations tells what the
// answer's [n] refer to.
func WithCollector(ctx context.Context) (context.Context, *Collector) {
	c := &Collector{}
	return context.WithValue(ctx, collectorKey{}, c), c
}

// Citations returns the sources given to the model by the last request
// that searched, or the last kb_search call that found passages: the
// numbering the final answer cites. It is empty when nothing searched, the
// search failed or it found nothing.
func (c *Collector) Citations() []Citation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.cites)
}

// set replaces the citations; a nil Collector ignores it.
func (c *Collector) set(cites []Citation) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.cites = cites
	c.mu.Unlock()
}

func collectorFrom(ctx context.Context) *Collector {
	c, _ := ctx.Value(collectorKey{}).(*Collector)
	return c
}
