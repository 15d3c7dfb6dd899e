package kb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/postgres"
	"github.com/agentcraftlab/agentcraft/search/sqlite"
)

// SearchFile is the name of the search database kept beside a SQLite store.
const SearchFile = "search.db"

// OpenEngine opens the search engine that goes with the store at
// databaseURL (config database.url): for sqlite://DIR/NAME.db a
// search/sqlite file DIR/search.db beside it, for postgres:// the
// search/postgres tables in the same database. emb may be nil: full-text
// search only, and hybrid queries say so in their note. The caller closes
// the returned Closer when done.
func OpenEngine(ctx context.Context, databaseURL string, emb search.Embedder, logger *slog.Logger) (Engine, io.Closer, error) {
	switch {
	case strings.HasPrefix(databaseURL, "sqlite://"):
		path := strings.TrimPrefix(databaseURL, "sqlite://")
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		if path == "" {
			return nil, nil, errors.New("kb: database.url sqlite:// names no file: use sqlite://PATH")
		}
		spath := sqlite.MemoryPath
		if path != sqlite.MemoryPath {
			spath = filepath.Join(filepath.Dir(path), SearchFile)
		}
		eng, err := sqlite.Open(ctx, spath, &sqlite.Options{Embedder: emb, Logger: logger})
		if err != nil {
			return nil, nil, fmt.Errorf("kb: open search engine: %w", err)
		}
		return eng, eng, nil
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		eng, err := postgres.Open(ctx, databaseURL, &postgres.Options{Embedder: emb, Logger: logger})
		if err != nil {
			return nil, nil, fmt.Errorf("kb: open search engine: %w", err)
		}
		return eng, eng, nil
	}
	return nil, nil, errors.New("kb: database.url must start with sqlite:// or postgres:// to choose a search engine")
}
