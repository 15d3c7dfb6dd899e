package postings

import (
	"cmp"
	"container/list"
	"slices"
	"sync"
)

// DefaultCacheBytes is the default bound of a Cache: SciFact's postings
// (5,183 documents) decode to about 8 MB, so 64 MB holds the hot terms of
// corpora several times larger.
const DefaultCacheBytes = 64 << 20

// List is the decoded postings of one term in one index, as of one
// generation of the index: parallel arrays, doc ids ascending. A List is
// immutable once handed to a Cache; a term absent from the index (or with
// no documents left) is a List with DF 0 and no postings, cached too so
// that a query for a rare word does not go back to the database.
type List struct {
	DF   int64     // document frequency: the number of postings
	Docs []int64   // document ids, ascending
	TF   []float32 // term frequency in Docs[i]
	Len  []float32 // length of Docs[i] in terms
}

// NewList decodes the segments of one term, given in any order, into a
// List with document frequency df.
func NewList(df int64, segs []Segment) (*List, error) {
	var ps []Posting
	for _, s := range segs {
		var err error
		if ps, err = appendDecoded(ps, s.First, s.Data); err != nil {
			return nil, err
		}
	}
	return FromPostings(df, ps), nil
}

func appendDecoded(ps []Posting, first int64, data []byte) ([]Posting, error) {
	err := Decode(first, data, func(doc, tf, dl int64) { ps = append(ps, Posting{doc, tf, dl}) })
	return ps, err
}

// FromPostings builds the List of ps (in any order; it sorts them by doc).
func FromPostings(df int64, ps []Posting) *List {
	sortPostings(ps)
	l := &List{DF: df, Docs: make([]int64, len(ps)), TF: make([]float32, len(ps)), Len: make([]float32, len(ps))}
	for i, p := range ps {
		l.Docs[i] = p.Doc
		l.TF[i] = float32(p.TF)
		l.Len[i] = float32(p.Len)
	}
	return l
}

// bytes approximates the memory l holds, for the cache's bound.
func (l *List) bytes() int64 {
	return int64(len(l.Docs))*16 + 96
}

// Cache keeps decoded posting Lists, keyed by (index id, term) and tagged
// with the index generation they were read at, evicting the least recently
// used beyond a bound in bytes. The engines read an index's generation (a
// counter bumped in the same transaction as every write to the index, by
// any process) at the start of each query and ask for Lists of that
// generation only, so a write is visible to the next query without any
// message between processes. Index ids must never be reused (both engines
// allocate them from a sequence). A nil *Cache caches nothing. Safe for
// concurrent use.
type Cache struct {
	max int64

	mu    sync.Mutex
	size  int64                      // guarded by mu: sum of entry sizes
	byKey map[cacheKey]*list.Element // guarded by mu: values are *cacheEntry
	lru   list.List                  // guarded by mu: most recently used first
}

type cacheKey struct {
	index int64
	term  string
}

type cacheEntry struct {
	key  cacheKey
	gen  int64
	list *List
	size int64
}

// NewCache returns a cache holding up to maxBytes of Lists; maxBytes <= 0
// returns nil, which caches nothing.
func NewCache(maxBytes int64) *Cache {
	if maxBytes <= 0 {
		return nil
	}
	return &Cache{max: maxBytes, byKey: make(map[cacheKey]*list.Element)}
}

// Get returns the List of term in index at generation gen, or nil. An
// entry of an older generation is dropped: it can never be asked for
// again, since generations only grow.
func (c *Cache) Get(index, gen int64, term string) *List {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.byKey[cacheKey{index, term}]
	if el == nil {
		return nil
	}
	e := el.Value.(*cacheEntry)
	if e.gen != gen {
		if e.gen < gen {
			c.remove(el)
		}
		return nil
	}
	c.lru.MoveToFront(el)
	return e.list
}

// Put caches l as the List of term in index at generation gen, unless the
// cache holds a newer generation of it already (a slower reader never
// replaces a newer List). A List larger than the whole bound is not kept.
func (c *Cache) Put(index, gen int64, term string, l *List) {
	if c == nil {
		return
	}
	size := l.bytes() + int64(len(term))
	if size > c.max {
		return
	}
	k := cacheKey{index, term}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.byKey[k]; el != nil {
		if el.Value.(*cacheEntry).gen > gen {
			return
		}
		c.remove(el)
	}
	c.byKey[k] = c.lru.PushFront(&cacheEntry{key: k, gen: gen, list: l, size: size})
	c.size += size
	for c.size > c.max {
		c.remove(c.lru.Back())
	}
}

// Bytes reports the approximate memory held by the cached Lists.
func (c *Cache) Bytes() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// remove drops el; c.mu must be held.
func (c *Cache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.byKey, e.key)
	c.size -= e.size
}

// sortPostings orders ps by doc; segments normally arrive in order, so
// the check is usually all it costs.
func sortPostings(ps []Posting) {
	byDoc := func(a, b Posting) int { return cmp.Compare(a.Doc, b.Doc) }
	if !slices.IsSortedFunc(ps, byDoc) {
		slices.SortFunc(ps, byDoc)
	}
}
