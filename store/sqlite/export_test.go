package sqlite

import "context"

// MigrateTo applies the migrations up to version only, for tests of a
// later migration.
func (s *Store) MigrateTo(ctx context.Context, version int64) error {
	return s.migrate(ctx, version, false)
}

// MigrateDownTo reverts the migrations after version.
func (s *Store) MigrateDownTo(ctx context.Context, version int64) error {
	return s.migrate(ctx, version, true)
}
