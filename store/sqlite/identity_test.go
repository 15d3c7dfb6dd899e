package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/store/storetest"
)

func TestKeyRolesMigration(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.MigrateTo(ctx, storetest.KeyRolesMigrationVersion); err != nil {
		t.Fatal(err)
	}
	storetest.KeyRolesMigration(t, st, func(ctx context.Context, workspaceID, keyID string, hash []byte) error {
		return st.Exec(ctx, `INSERT INTO api_keys (id, workspace_id, name, prefix, hash, created_at) VALUES (?, ?, 'old', 'ac_old', ?, ?)`,
			keyID, workspaceID, hash, time.Now().UnixMicro())
	}, st.Migrate, func(ctx context.Context) error {
		return st.MigrateDownTo(ctx, storetest.KeyRolesMigrationVersion)
	})
}
