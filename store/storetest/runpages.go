package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// testRunPages covers CheckpointPage and StoredBytes.
func testRunPages(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CheckpointPage", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		r := mustRun(t, st, a.ID)
		for i := range 7 {
			cp := store.Checkpoint{RunID: r.ID, Key: fmt.Sprintf("n%d", i), NodeID: "n", Output: json.RawMessage(fmt.Sprint(i)), CreatedAt: time.Now()}
			if err := st.Runs().Checkpoint(ctx, a.ID, cp, nil); err != nil {
				t.Fatal(err)
			}
		}
		var keys []string
		var cursor int64
		pages := 0
		for {
			page, next, err := st.Runs().CheckpointPage(ctx, a.ID, r.ID, cursor, 3)
			if err != nil {
				t.Fatalf("CheckpointPage(cursor %d) = %v", cursor, err)
			}
			pages++
			for _, cp := range page {
				keys = append(keys, cp.Key)
			}
			if next == 0 {
				break
			}
			if pages > 5 {
				t.Fatal("CheckpointPage never ends")
			}
			cursor = next
		}
		if got := strings.Join(keys, ","); got != "n0,n1,n2,n3,n4,n5,n6" || pages != 3 {
			t.Errorf("paged keys = %s in %d pages, want n0..n6 in 3", got, pages)
		}
		if page, next, err := st.Runs().CheckpointPage(ctx, a.ID, r.ID, 0, 0); err != nil || len(page) != 7 || next != 0 {
			t.Errorf("CheckpointPage(limit 0) = %d checkpoints, next %d, %v; want all 7 and no next", len(page), next, err)
		}
		if _, _, err := st.Runs().CheckpointPage(ctx, b.ID, r.ID, 0, 0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("CheckpointPage from another workspace = %v, want ErrNotFound", err)
		}
		empty := mustRun(t, st, a.ID)
		if page, next, err := st.Runs().CheckpointPage(ctx, a.ID, empty.ID, 0, 0); err != nil || len(page) != 0 || next != 0 {
			t.Errorf("CheckpointPage of a run without checkpoints = %v, %d, %v", page, next, err)
		}
	})
	t.Run("StoredBytes", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		if n, err := st.Runs().StoredBytes(ctx, a.ID); err != nil || n != 0 {
			t.Fatalf("StoredBytes of an empty workspace = %d, %v; want 0", n, err)
		}
		r := mustRun(t, st, a.ID)
		big := json.RawMessage(`"` + strings.Repeat("x", 10000) + `"`)
		ev := store.RunEvent{RunID: r.ID, Seq: 1, Type: "node_finished", Data: big, CreatedAt: time.Now()}
		if err := st.Runs().Checkpoint(ctx, a.ID, store.Checkpoint{RunID: r.ID, Key: "k", NodeID: "k", Output: big, CreatedAt: time.Now()}, []store.RunEvent{ev}); err != nil {
			t.Fatal(err)
		}
		n, err := st.Runs().StoredBytes(ctx, a.ID)
		// PostgreSQL reports the stored (possibly compressed) size.
		if err != nil || n <= 0 || n > 2*int64(len(big))+100 {
			t.Errorf("StoredBytes = %d, %v; want about %d (a checkpoint and an event of %d bytes)", n, err, 2*len(big), len(big))
		}
		if n, err := st.Runs().StoredBytes(ctx, b.ID); err != nil || n != 0 {
			t.Errorf("StoredBytes of another workspace = %d, %v; want 0", n, err)
		}
	})
}
