package searchtest_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/search/searchtest"
)

func TestTableEmbedder(t *testing.T) {
	table := map[string][]float32{"a": {1, 0}, "b": {0, 1}}
	f := searchtest.NewTableEmbedder(2, table)
	table["a"][0] = 9 // the fixture keeps its own copy

	got, err := f.Embed(t.Context(), []string{"b", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]float32{{0, 1}, {1, 0}}, got); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	got[0][0] = 7 // callers may normalise in place
	if again, _ := f.Embed(t.Context(), []string{"b"}); again[0][0] != 0 {
		t.Errorf("a caller's change reached the table: %v", again)
	}
	if _, err := f.Embed(t.Context(), []string{"a", "unknown"}); err == nil {
		t.Error("Embed of a text missing from the table returned no error")
	}
	down := errors.New("down")
	f.SetErr(down)
	if _, err := f.Embed(t.Context(), []string{"a"}); !errors.Is(err, down) {
		t.Errorf("Embed after SetErr: %v, want %v", err, down)
	}
	f.SetErr(nil)
	if _, err := f.Embed(t.Context(), []string{"a"}); err != nil {
		t.Errorf("Embed after SetErr(nil): %v", err)
	}
	if f.Calls() != 5 || f.Dimension() != 2 {
		t.Errorf("Calls() = %d, Dimension() = %d; want 5 and 2", f.Calls(), f.Dimension())
	}
}
