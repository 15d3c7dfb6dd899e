package queue

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// migrateLockKey is the PostgreSQL advisory lock that serializes River
// migrations between processes starting at once (serve and workers):
// rivermigrate itself does not lock. The value is arbitrary but fixed.
const migrateLockKey int64 = 0x61676e74_71756575 // "agntqueu"

// withMigrateLock runs f while holding migrateLockKey on a connection of
// pool.
func withMigrateLock(ctx context.Context, pool *pgxpool.Pool, f func() error) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		return err
	}
	// Unlock even when ctx has ended, so the pooled session does not keep
	// the lock.
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLockKey) //nolint:errcheck
	return f()
}
