package cli

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// TestSweepSessionsDeletesExpired: the sweep serve starts removes a
// session once it has expired, at its next tick, and stop ends it.
func TestSweepSessionsDeletesExpired(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st, err := sqlite.Open(ctx, filepath.Join(dir, "agentcraft.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		cfg := config.Default()
		cfg.Auth.IdleTimeout, cfg.Auth.AbsoluteTimeout = 30*time.Minute, time.Hour
		ids, err := newIdentity(st, cfg, identity.Options{Hasher: identity.DefaultArgon2id})
		if err != nil {
			t.Fatal(err)
		}
		const pw = "correct horse battery staple"
		u, err := ids.CreateUser(ctx, identity.NewUser{Email: "ann@example.com", Password: pw})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ids.Login(ctx, u.Email, pw, identity.Client{}); err != nil {
			t.Fatal(err)
		}
		count := func() int {
			ss, err := st.Sessions().ListByUser(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(ss)
		}
		stop := sweepSessions(ids, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
		defer stop()
		synctest.Wait()
		if n := count(); n != 1 {
			t.Fatalf("sessions after the first sweep = %d, want the live one", n)
		}
		time.Sleep(time.Hour + time.Second) // past the idle expiry, at the next tick
		synctest.Wait()
		// ListByUser hides expired sessions; a Sweep of our own finds
		// none left only if the background one deleted it.
		if n, err := ids.Sweep(ctx); err != nil || n != 0 {
			t.Errorf("expired sessions left after the hourly sweep = %d (%v), want none", n, err)
		}
	})
}
