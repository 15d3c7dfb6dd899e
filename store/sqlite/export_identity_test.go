package sqlite

import "context"

// Exec runs a statement on the writer, for tests that write rows the way
// an older schema knew them.
func (s *Store) Exec(ctx context.Context, query string, args ...any) error {
	_, err := s.writer.ExecContext(ctx, query, args...)
	return err
}
