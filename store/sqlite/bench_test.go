package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// benchStore returns a migrated store holding one workspace.
func benchStore(b *testing.B) (*Store, store.Workspace) {
	b.Helper()
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(b.TempDir(), "agentcraft.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	w, err := st.Workspaces().GetOrCreate(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	return st, w
}

// BenchmarkAPIKeyGetByHash measures the lookup every authenticated request
// makes, among 1000 keys. Adhoc is the same query without the prepared
// statement, the peer that justifies keeping one.
func BenchmarkAPIKeyGetByHash(b *testing.B) {
	ctx := context.Background()
	st, w := benchStore(b)
	hashes := make([][]byte, 1000)
	for i := range hashes {
		h := sha256.Sum256(fmt.Appendf(nil, "ac_key-%d", i))
		hashes[i] = h[:]
		if _, err := st.APIKeys().Create(ctx, store.APIKey{WorkspaceID: w.ID, Name: "k", Prefix: "ac_", Hash: hashes[i]}); err != nil {
			b.Fatal(err)
		}
	}
	getByHash := st.APIKeys().GetByHash
	adhoc := func(ctx context.Context, hash []byte) (store.APIKey, error) {
		return scanAPIKey(st.reader.QueryRowContext(ctx, queryKeyByHash, hash))
	}
	for _, bm := range []struct {
		name string
		get  func(context.Context, []byte) (store.APIKey, error)
	}{
		{"Prepared", getByHash},
		{"Adhoc", adhoc},
	} {
		b.Run(bm.name+"/Serial", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := bm.get(ctx, hashes[i%len(hashes)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(bm.name+"/Parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if _, err := bm.get(ctx, hashes[i%len(hashes)]); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}

// BenchmarkUsageRecord measures the write every model request makes.
func BenchmarkUsageRecord(b *testing.B) {
	ctx := context.Background()
	st, w := benchStore(b)
	r := store.UsageRecord{WorkspaceID: w.ID, Agent: "a", Model: "gpt-4o", Provider: "openai",
		InputTokens: 100, OutputTokens: 50, LatencyMs: 900, UpstreamMs: 850, Status: store.StatusOK}
	b.Run("Serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := st.Usage().Record(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8) // many request goroutines per core
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := st.Usage().Record(ctx, r); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkRunCheckpoint measures the durable checkpoint every workflow node
// writes (target: 150µs): one checkpoint and two events per call. Adhoc
// runs the same statements unprepared, the peer that justifies caching
// them.
func BenchmarkRunCheckpoint(b *testing.B) {
	ctx := context.Background()
	st, w := benchStore(b)
	output := json.RawMessage(`{"text": "a paragraph of model output, about the size a node returns", "tokens": 57}`)
	for _, bm := range []struct {
		name    string
		prepare func(context.Context, string) (*sql.Stmt, error)
	}{
		{"Prepared", st.writeStmt},
		{"Adhoc", nil},
	} {
		b.Run(bm.name, func(b *testing.B) {
			run, err := st.Runs().Create(ctx, store.Run{WorkspaceID: w.ID, Definition: json.RawMessage(`{}`)})
			if err != nil {
				b.Fatal(err)
			}
			d := driver{st}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				cp := store.Checkpoint{RunID: run.ID, Key: "node#" + strconv.Itoa(i), NodeID: "node", Output: output}
				events := []store.RunEvent{
					{RunID: run.ID, Seq: int64(2*i + 1), Type: "node_finished", Data: output},
					{RunID: run.ID, Seq: int64(2*i + 2), Type: "node_started", Data: json.RawMessage(`{"node": "next"}`)},
				}
				p := &store.RunCheckpointInsertParams{WorkspaceID: w.ID, Checkpoint: cp, Events: events, Now: store.Timestamp(time.Now())}
				if err := d.checkpoint(ctx, p, bm.prepare); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
