package sqlengine

import (
	"context"
	"strings"
	"testing"
)

// fakeTx holds one index, "kb" (id 7), whose documents are "a" and "b".
type fakeTx struct{ calls []string }

func (f *fakeTx) IndexID(_ context.Context, name string) (int64, error) {
	f.calls = append(f.calls, "IndexID")
	if name != "kb" {
		return 0, nil
	}
	return 7, nil
}

func (f *fakeTx) RemoveDocs(_ context.Context, _ int64, ids []string) (int64, int64, error) {
	f.calls = append(f.calls, "RemoveDocs")
	var n int64
	for _, id := range ids {
		if id == "a" || id == "b" {
			n++
		}
	}
	return n, 3 * n, nil
}

func (f *fakeTx) LowerIndex(context.Context, int64, int64, int64) error {
	f.calls = append(f.calls, "LowerIndex")
	return nil
}

func (f *fakeTx) DropIndex(context.Context, int64) error {
	f.calls = append(f.calls, "DropIndex")
	return nil
}

// TestDelete holds both engines to one order of writes: nothing for an
// unknown index, and no new generation (which would empty the caches of
// every process) when no document went.
func TestDelete(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		index string
		ids   []string
		drop  bool
		want  string
	}{
		{"missing", []string{"a"}, false, "IndexID"},
		{"kb", []string{"zzz"}, false, "IndexID,RemoveDocs"},
		{"kb", []string{"a", "zzz"}, false, "IndexID,RemoveDocs,LowerIndex"},
		{"missing", nil, true, "IndexID"},
		{"kb", nil, true, "IndexID,DropIndex"},
	} {
		tx := &fakeTx{}
		var err error
		if tt.drop {
			err = DeleteIndex(ctx, tx, tt.index)
		} else {
			err = Delete(ctx, tx, tt.index, tt.ids)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(tx.calls, ","); got != tt.want {
			t.Errorf("delete %v from %q (drop %v): calls %s, want %s", tt.ids, tt.index, tt.drop, got, tt.want)
		}
	}
}
