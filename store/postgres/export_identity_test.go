package postgres

import "context"

// Exec runs a statement, for tests that write rows the way an older
// schema knew them.
func (s *Store) Exec(ctx context.Context, query string, args ...any) error {
	_, err := s.pool.Exec(ctx, query, args...)
	return err
}
