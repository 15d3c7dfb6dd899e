package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store/postgres"
	"github.com/agentcraftlab/agentcraft/store/storetest"
)

func TestKeyRolesMigration(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.MigrateTo(ctx, storetest.KeyRolesMigrationVersion); err != nil {
		t.Fatal(err)
	}
	storetest.KeyRolesMigration(t, st, func(ctx context.Context, workspaceID, keyID string, hash []byte) error {
		return st.Exec(ctx, `INSERT INTO api_keys (id, workspace_id, name, prefix, hash, created_at) VALUES ($1, $2, 'old', 'ac_old', $3, $4)`,
			keyID, workspaceID, hash, time.Now())
	}, st.Migrate, func(ctx context.Context) error {
		return st.MigrateDownTo(ctx, storetest.KeyRolesMigrationVersion)
	})
}
