package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/queue"
	"github.com/agentcraftlab/agentcraft/search"
	pgsearch "github.com/agentcraftlab/agentcraft/search/postgres"
	sqlitesearch "github.com/agentcraftlab/agentcraft/search/sqlite"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/postgres"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// The database, opened once
//
// Every command that touches the database parses database.url once
// (database.Parse, which config.Load also uses to refuse a bad URL) and
// opens it once (openDatabase): one database.DB, a single SQLite file with
// its writer and readers or one PostgreSQL pool, which the store, the
// search engine and the job queue all use. openDatabase then migrates, in
// this order, whichever command runs it, so every process sees one
// schema:
//
//  1. the store's tables (goose, versioned in goose_db_version);
//  2. the search index's tables (search/sqlite or search/postgres, created
//     when missing), and on SQLite the index of an older install, which
//     kept it in data/search.db, moved in (legacySearchFile);
//  3. River's tables (rivermigrate, versioned in river_migration).
//
// On PostgreSQL each step holds an advisory lock of its own, so serve and
// workers starting at once wait for each other instead of racing.

// legacySearchFile is the search index's own file beside agentcraft.db in
// installs before the index moved into the main database.
const legacySearchFile = "search.db"

// openedDB is the database with the store on it, migrated.
type openedDB struct {
	db *database.DB
	st store.Store
	// applied counts the store's and River's migrations applied by this
	// opening; moved is the number of documents brought in from
	// legacySearchFile.
	applied, moved int64
}

// close closes the store, then the database.
func (o *openedDB) close() {
	o.st.Close()
	o.db.Close()
}

// parseDatabase parses the configured database.url.
func parseDatabase(url string) (database.URL, error) {
	u, err := database.Parse(url)
	if err != nil {
		return database.URL{}, fmt.Errorf("database.url: %w", err)
	}
	return u, nil
}

// openConfigured parses the configured database.url and opens it
// (openDatabase): what a short command does first.
func openConfigured(ctx context.Context, url string, logger *slog.Logger) (*openedDB, error) {
	u, err := parseDatabase(url)
	if err != nil {
		return nil, err
	}
	return openDatabase(ctx, u, logger)
}

// openDatabase opens the database u names, builds the store on it and
// migrates everything, in the order above. It logs which database it
// opened, and whether it had to create it, so that a command run from the
// wrong directory says so.
func openDatabase(ctx context.Context, u database.URL, logger *slog.Logger) (_ *openedDB, err error) {
	db, err := database.Open(ctx, u, &database.Options{Logger: logger})
	if err != nil {
		return nil, err
	}
	o := &openedDB{db: db}
	defer func() {
		if err != nil {
			if o.st != nil {
				o.st.Close()
			}
			db.Close()
		}
	}()
	var counter interface {
		store.Store
		MigrateCount(ctx context.Context) (int, error)
	}
	switch db.Kind() {
	case database.SQLite:
		counter, err = sqlite.New(db, nil)
	case database.Postgres:
		counter, err = postgres.New(db, nil)
	default:
		err = errors.New("database.url names no database")
	}
	if err != nil {
		return nil, err
	}
	o.st = counter
	n, err := counter.MigrateCount(ctx)
	if err != nil {
		return nil, err
	}
	o.applied += int64(n)
	switch db.Kind() {
	case database.SQLite:
		if err := sqlitesearch.Migrate(ctx, db); err != nil {
			return nil, err
		}
		if u.Path != database.MemoryPath {
			old := filepath.Join(filepath.Dir(db.Path()), legacySearchFile)
			if o.moved, err = sqlitesearch.MoveFrom(ctx, db, old); err != nil {
				return nil, err
			}
			if o.moved > 0 {
				logger.Info("search_index_moved", "from", old, "into", db.Path(), "documents", o.moved,
					"hint", "the old file is kept as "+legacySearchFile+sqlitesearch.MovedSuffix+"; delete it once the knowledge bases answer")
			}
		}
	case database.Postgres:
		if err := pgsearch.Migrate(ctx, db, nil); err != nil {
			return nil, err
		}
	}
	rn, err := queue.Migrate(ctx, db, "")
	if err != nil {
		return nil, err
	}
	o.applied += int64(rn)
	if db.Created() {
		logger.Warn("database_created", "database", u.String(),
			"hint", "there was no database at this path; if you meant an existing one, pass --config or set database.url")
	} else {
		logger.Info("database_opened", "database", u.String())
	}
	return o, nil
}

// openSearch builds the search engine on db, whose tables openDatabase
// created. emb may be nil: full-text search only.
func openSearch(ctx context.Context, db *database.DB, emb search.Embedder, logger *slog.Logger) (kb.Engine, func(), error) {
	var eng interface {
		kb.Engine
		Close() error
	}
	var err error
	switch db.Kind() {
	case database.SQLite:
		eng, err = sqlitesearch.New(ctx, db, &sqlitesearch.Options{Embedder: emb, Logger: logger})
	case database.Postgres:
		eng, err = pgsearch.New(ctx, db, &pgsearch.Options{Embedder: emb, Logger: logger})
	default:
		err = errors.New("database.url names no database")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open search engine: %w", err)
	}
	return eng, func() { eng.Close() }, nil
}
