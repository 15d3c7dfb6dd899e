package bleve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/search/postgres"
	"github.com/agentcraftlab/agentcraft/search/sqlite"
)

// Names of the engines under test; they are the sub-benchmark names.
const (
	nameMemory = "agentcraft-memory"
	nameSQLite = "agentcraft-sqlite"
	nameBleve  = "bleve"
	// nameBleveDisk is bleve on disk, the peer of the SQLite engine.
	nameBleveDisk = "bleve-disk"
	// namePostgres runs only when postgresDSNEnv is set.
	namePostgres = "agentcraft-postgres"
)

// postgresDSNEnv names the PostgreSQL database of the agentcraft-postgres
// engine (such as postgres://postgres@127.0.0.1:5432/test?sslmode=disable);
// unset, that engine is left out.
const postgresDSNEnv = "AGENTCRAFT_TEST_POSTGRES_DSN"

// tempRoot holds the files of engines cached across benchmarks (b.TempDir
// would be removed when the first benchmark using them ends); TestMain
// removes it.
var tempRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentcraft-bench-bleve-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "create temporary directory:", err)
		os.Exit(1)
	}
	tempRoot = dir
	if os.Getenv(postgresDSNEnv) != "" {
		sciEngines = append(sciEngines, struct {
			name string
			open func(tb testing.TB) engine
		}{namePostgres, func(tb testing.TB) engine { return openPostgres(tb, nil) }})
		sciCache[namePostgres] = &cached{}
	}
	code := m.Run()
	closeCached()
	os.RemoveAll(dir)
	os.Exit(code)
}

// tempDir returns a new directory under tempRoot.
func tempDir(tb testing.TB) string {
	tb.Helper()
	d, err := os.MkdirTemp(tempRoot, "engine-")
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// engine is what the benchmarks need of an engine under test: AgentCraft's
// search.Engine adapters and bleve (bleveEngine) both satisfy it.
type engine interface {
	// Index adds docs in one call (one bleve batch, one Index call).
	Index(ctx context.Context, docs ...search.Document) error
	// SearchIDs returns the IDs and scores of the k best documents for
	// text in mode, best first.
	SearchIDs(ctx context.Context, text string, mode search.Mode, k int) ([]string, []float64, error)
	io.Closer
}

// agentcraft adapts a search.Engine to engine.
type agentcraft struct {
	search.Engine
	close func() error
}

func (a agentcraft) SearchIDs(ctx context.Context, text string, mode search.Mode, k int) ([]string, []float64, error) {
	res, err := a.Search(ctx, search.Query{Text: text, Mode: mode, TopK: k})
	if err != nil {
		return nil, nil, err
	}
	if res.Mode != mode {
		return nil, nil, fmt.Errorf("asked for a %s search, got %s (%s)", mode, res.Mode, res.Note)
	}
	ids := make([]string, len(res.Hits))
	scores := make([]float64, len(res.Hits))
	for i, h := range res.Hits {
		ids[i], scores[i] = h.ID, h.Score
	}
	return ids, scores, nil
}

func (a agentcraft) Close() error {
	if a.close == nil {
		return nil
	}
	return a.close()
}

// openMemory returns an empty search/memory engine.
func openMemory(tb testing.TB, emb search.Embedder) engine {
	tb.Helper()
	e, err := memory.New(&memory.Options{Embedder: emb})
	if err != nil {
		tb.Fatal(err)
	}
	return agentcraft{Engine: e}
}

// openSQLite returns an empty search/sqlite engine on a new file under
// tempRoot.
func openSQLite(tb testing.TB, emb search.Embedder) engine {
	tb.Helper()
	e, err := sqlite.Open(context.Background(), filepath.Join(tempDir(tb), "search.db"), &sqlite.Options{Embedder: emb})
	if err != nil {
		tb.Fatal(err)
	}
	return agentcraft{Engine: e, close: e.Close}
}

// openPostgres returns an empty search/postgres engine in a new schema of
// the database at $AGENTCRAFT_TEST_POSTGRES_DSN; closing it drops the
// schema.
func openPostgres(tb testing.TB, emb search.Embedder) engine {
	tb.Helper()
	ctx := context.Background()
	dsn := os.Getenv(postgresDSNEnv)
	var b [6]byte
	rand.Read(b[:])
	schema := "bench_" + hex.EncodeToString(b[:])
	e, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema, Embedder: emb})
	if err != nil {
		tb.Fatal(err)
	}
	return agentcraft{Engine: e, close: func() error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return errors.Join(e.Close(), err)
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
		return errors.Join(e.Close(), err)
	}}
}

// cached is an engine built once and shared by the benchmarks of one
// family; building SciFact takes seconds and 100k chunks minutes.
type cached struct {
	mu sync.Mutex
	e  engine // guarded by mu
}

var (
	cachedMu  sync.Mutex
	allCached []*cached // guarded by cachedMu; closed by TestMain
)

// get returns the cached engine, building it first if needed.
func (c *cached) get(tb testing.TB, build func(tb testing.TB) engine) engine {
	tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.e == nil {
		c.e = build(tb)
		c.register()
	}
	return c.e
}

// offer keeps e as the cached engine when there is none yet (an ingest
// benchmark built it anyway) and closes it otherwise.
func (c *cached) offer(e engine) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.e == nil {
		c.e = e
		c.register()
		return
	}
	e.Close()
}

func (c *cached) register() {
	cachedMu.Lock()
	defer cachedMu.Unlock()
	allCached = append(allCached, c)
}

func closeCached() {
	cachedMu.Lock()
	defer cachedMu.Unlock()
	for _, c := range allCached {
		c.mu.Lock()
		if c.e != nil {
			c.e.Close()
			c.e = nil
		}
		c.mu.Unlock()
	}
}

// ingest indexes docs into e in batches of batch documents.
func ingest(ctx context.Context, e engine, docs []search.Document, batch int) error {
	for chunk := range slices.Chunk(docs, batch) {
		if err := e.Index(ctx, chunk...); err != nil {
			return err
		}
	}
	return nil
}

// benchIngest times building a fresh engine from open and indexing docs
// into it per op, reporting docs per second under unit; the last engine
// built is offered to c for the query benchmarks.
func benchIngest(b *testing.B, open func(tb testing.TB) engine, docs []search.Document, batch int, unit string, c *cached) {
	ctx := context.Background()
	var last engine
	b.ReportAllocs()
	for b.Loop() {
		if last != nil {
			b.StopTimer()
			last.Close()
			b.StartTimer()
		}
		e := open(b)
		if err := ingest(ctx, e, docs, batch); err != nil {
			b.Fatal(err)
		}
		last = e
	}
	b.ReportMetric(float64(len(docs)*b.N)/b.Elapsed().Seconds(), unit)
	if c != nil {
		c.offer(last)
	} else {
		last.Close()
	}
}

// benchQuery times one top-10 query per op, cycling through queries, and
// reports p50 and p99 latency in milliseconds and queries per second.
func benchQuery(b *testing.B, e engine, queries []string, mode search.Mode) {
	ctx := context.Background()
	// A first query loads lazily built state (the SQLite engine's vector
	// cache) outside the timed loop.
	if _, _, err := e.SearchIDs(ctx, queries[0], mode, 10); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, 1024)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, _, err := e.SearchIDs(ctx, queries[i%len(queries)], mode, 10); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	reportLatency(b, lat)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "qps")
}

// reportLatency adds p50 and p99 of d in milliseconds.
func reportLatency(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(ms(d[len(d)/2]), "p50-ms")
	b.ReportMetric(ms(d[len(d)*99/100]), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
