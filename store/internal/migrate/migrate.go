// Package migrate moves a driver's schema with goose, the one step of
// Migrate that store/sqlite and store/postgres share word for word.
package migrate

import (
	"context"

	"github.com/pressly/goose/v3"
)

// Apply applies p's migrations up to version to, or all when to is 0; with
// down, it reverts those after version to instead (tests of a migration
// start from the version before it, and go back to it).
func Apply(ctx context.Context, p *goose.Provider, to int64, down bool) (applied int, err error) {
	var res []*goose.MigrationResult
	switch {
	case down:
		res, err = p.DownTo(ctx, to)
	case to > 0:
		res, err = p.UpTo(ctx, to)
	default:
		res, err = p.Up(ctx)
	}
	return len(res), err
}
