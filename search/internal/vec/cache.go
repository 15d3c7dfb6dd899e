package vec

import "sync"

// Set is the unit vectors of one index as of generation Gen, loaded from a
// database so that a query does not read every vector blob again. It is
// immutable once built and handed to the Cache.
type Set struct {
	Name string
	Gen  int64
	Dim  int
	Docs []int64   // row ids
	Vecs []float32 // i*Dim .. (i+1)*Dim is Docs[i]'s unit vector
}

// Add appends doc's vector, encoded as by Encode. The first vector sets
// Dim; a blob of another size is refused (false) and not added.
func (s *Set) Add(doc int64, blob []byte) bool {
	if s.Dim == 0 {
		s.Dim = len(blob) / 4
	}
	if s.Dim == 0 || len(blob) != 4*s.Dim {
		return false
	}
	s.Docs = append(s.Docs, doc)
	s.Vecs = Decode(s.Vecs, blob)
	return true
}

// Cache keeps the newest Set of each index id. The zero value is ready;
// it is safe for concurrent use.
type Cache struct {
	mu   sync.Mutex
	sets map[int64]*Set
}

// Get returns the index's Set if it is cached at generation gen.
func (c *Cache) Get(id, gen int64) *Set {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sets[id]; s != nil && s.Gen == gen {
		return s
	}
	return nil
}

// Put caches s for index id unless a newer generation is cached already:
// generations only grow, so a slower loader never replaces a newer Set.
func (c *Cache) Put(id int64, s *Set) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sets == nil {
		c.sets = map[int64]*Set{}
	}
	if old := c.sets[id]; old == nil || old.Gen < s.Gen {
		c.sets[id] = s
	}
}

// DropIndex forgets the Set of the index called name.
func (c *Cache) DropIndex(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, s := range c.sets {
		if s.Name == name {
			delete(c.sets, id)
		}
	}
}
