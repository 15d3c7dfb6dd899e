package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

// SourcesMigrationVersion is the last migration before knowledge-base
// sources moved from the settings JSON into their own table.
const SourcesMigrationVersion = 8

// SourcesMigration checks the move of knowledge-base sources out of
// knowledge_bases.settings: st is migrated up to SourcesMigrationVersion,
// finish applies the rest. Every base keeps its files, counts and other
// settings; the "sources" key leaves the settings. Then down reverts to
// SourcesMigrationVersion and finish runs again: the files survive the
// round trip.
func SourcesMigration(t *testing.T, st store.Store, finish, down func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	ws, err := st.Workspaces().GetOrCreate(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	create := func(name, settings string) store.KnowledgeBase {
		t.Helper()
		kb, err := st.KnowledgeBases().Create(ctx, store.KnowledgeBase{WorkspaceID: ws.ID, Name: name, IndexName: ws.ID + "_kb_" + name,
			Settings: json.RawMessage(settings)})
		if err != nil {
			t.Fatalf("Create %s at version %d: %v", name, SourcesMigrationVersion, err)
		}
		return kb
	}
	// As kb wrote them: file name → {documents, chunks, parts | ids}.
	withOther := create("handbook", `{"chunk_size": 400, "sources": {
		"leave.txt": {"documents": 1, "chunks": 3, "parts": {"leave.txt": 3}},
		"corpus.jsonl": {"documents": 2, "chunks": 2, "ids": ["d1", "d2"]}}}`)
	onlySources := create("faq", `{"sources": {"faq.md": {"documents": 1, "chunks": 5, "parts": {"faq.md": 5}}}}`)
	none := create("empty", ``)
	odd := create("odd", `{"sources": ["not", "an", "object"]}`)

	if err := finish(ctx); err != nil {
		t.Fatalf("migrating on from version %d: %v", SourcesMigrationVersion, err)
	}

	check := func(kb store.KnowledgeBase, wantSettings string, want []string) {
		t.Helper()
		got, err := st.KnowledgeBases().Get(ctx, ws.ID, kb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if wantSettings == "" && got.Settings != nil || wantSettings != "" && !jsonEqualBytes(t, got.Settings, []byte(wantSettings)) {
			t.Errorf("%s: settings after the migration = %s, want %q", kb.Name, got.Settings, wantSettings)
		}
		srcs, err := st.KnowledgeBases().ListSources(ctx, ws.ID, kb.ID)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, s := range srcs {
			var rec map[string]any
			if err := json.Unmarshal(s.Record, &rec); err != nil {
				t.Errorf("%s/%s: record %s: %v", kb.Name, s.Name, s.Record, err)
			}
			lines = append(lines, fmt.Sprintf("%s %d/%d parts=%v ids=%v", s.Name, s.Documents, s.Chunks, rec["parts"], rec["ids"]))
		}
		if diff := cmp.Diff(want, lines); diff != "" {
			t.Errorf("%s: sources after the migration (-want +got):\n%s", kb.Name, diff)
		}
	}
	check(withOther, `{"chunk_size": 400}`, []string{
		"corpus.jsonl 2/2 parts=<nil> ids=[d1 d2]",
		"leave.txt 1/3 parts=map[leave.txt:3] ids=<nil>",
	})
	check(onlySources, "", []string{"faq.md 1/5 parts=map[faq.md:5] ids=<nil>"})
	check(none, "", nil)
	// kb refused such settings; the key goes, with nothing to move.
	check(odd, "", nil)

	if err := down(ctx); err != nil {
		t.Fatalf("migrating down to version %d: %v", SourcesMigrationVersion, err)
	}
	if err := finish(ctx); err != nil {
		t.Fatalf("migrating up again: %v", err)
	}
	check(withOther, `{"chunk_size": 400}`, []string{
		"corpus.jsonl 2/2 parts=<nil> ids=[d1 d2]",
		"leave.txt 1/3 parts=map[leave.txt:3] ids=<nil>",
	})
	check(none, "", nil)
}

func jsonEqualBytes(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}
