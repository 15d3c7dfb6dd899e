package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

func TestNewIDSortsByCreation(t *testing.T) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = store.NewID()
	}
	if !slices.IsSorted(ids) {
		t.Error("ids generated in sequence do not sort in sequence")
	}
	if len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Error("NewID repeated an id")
	}
}

func TestTimestamp(t *testing.T) {
	in := time.Date(2025, 1, 2, 3, 4, 5, 678901234, time.FixedZone("JST", 9*3600))
	got := store.Timestamp(in)
	want := time.Date(2025, 1, 1, 18, 4, 5, 678901000, time.UTC)
	if !got.Equal(want) || got.Location() != time.UTC || got.Nanosecond() != want.Nanosecond() {
		t.Errorf("Timestamp(%v) = %v, want %v", in, got, want)
	}
}

// TestValidate checks that each refusal wraps ErrInvalid and names the
// field to fix; the drivers' conformance suite checks they call Validate.
func TestValidate(t *testing.T) {
	hash := make([]byte, 32)
	for _, tc := range []struct {
		name  string
		err   error
		field string // "" when the row is valid
	}{
		{"workspace ok", store.Workspace{Name: "w"}.Validate(), ""},
		{"workspace no name", store.Workspace{}.Validate(), "Workspace.Name"},
		{"key ok", store.APIKey{WorkspaceID: "w", Hash: hash}.Validate(), ""},
		{"key plaintext", store.APIKey{WorkspaceID: "w", Hash: []byte("ac_secret")}.Validate(), "APIKey.Hash"},
		{"agent ok", store.Agent{WorkspaceID: "w", Name: "a", Model: "p/m", Source: store.SourceAPI}.Validate(), ""},
		{"agent no model", store.Agent{WorkspaceID: "w", Name: "a", Source: store.SourceAPI}.Validate(), "Agent.Model"},
		{"agent bad source", store.Agent{WorkspaceID: "w", Name: "a", Model: "p/m", Source: "yaml"}.Validate(), "Agent.Source"},
		{"agent bad middleware", store.Agent{WorkspaceID: "w", Name: "a", Model: "p/m", Source: store.SourceAPI,
			Params: store.AgentParams{Middleware: json.RawMessage("{")}}.Validate(), "middleware"},
		{"provider ok", store.Provider{WorkspaceID: "w", Name: "p", Type: "openai", Source: store.SourceConfig}.Validate(), ""},
		{"provider no type", store.Provider{WorkspaceID: "w", Name: "p", Source: store.SourceConfig}.Validate(), "Provider.Type"},
		{"credential ok", store.Credential{WorkspaceID: "w", Provider: "p", Ciphertext: []byte{1}, KeyID: "k"}.Validate(), ""},
		{"credential no key id", store.Credential{WorkspaceID: "w", Provider: "p", Ciphertext: []byte{1}}.Validate(), "Credential.KeyID"},
		{"usage ok", store.UsageRecord{WorkspaceID: "w", Status: store.StatusError}.Validate(), ""},
		{"usage bad status", store.UsageRecord{WorkspaceID: "w", Status: "fail"}.Validate(), "UsageRecord.Status"},
	} {
		switch {
		case tc.field == "" && tc.err != nil:
			t.Errorf("%s: Validate() = %v, want nil", tc.name, tc.err)
		case tc.field != "" && !errors.Is(tc.err, store.ErrInvalid):
			t.Errorf("%s: Validate() = %v, want ErrInvalid", tc.name, tc.err)
		case tc.field != "" && !strings.Contains(tc.err.Error(), tc.field):
			t.Errorf("%s: Validate() = %q, want it to name %s", tc.name, tc.err, tc.field)
		}
	}
}
