package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

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

// TestIDFor checks that a derived id is stable for its (time, key), differs
// for another key or millisecond, and is a UUIDv7 that sorts by its time
// as NewID's do.
func TestIDFor(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	id := store.IDFor(at, "trigger/t1/1")
	if again := store.IDFor(at, "trigger/t1/1"); again != id {
		t.Errorf("IDFor twice = %s, %s; want the same id", id, again)
	}
	u, err := uuid.Parse(id)
	if err != nil || u.String() != id || u.Version() != 7 || u.Variant() != uuid.RFC4122 {
		t.Fatalf("IDFor = %q (%v); want a canonical UUIDv7", id, err)
	}
	if sec, nsec := u.Time().UnixTime(); time.Unix(sec, nsec).UnixMilli() != at.UnixMilli() {
		t.Errorf("IDFor time = %v, want %v", time.Unix(sec, nsec).UTC(), at)
	}
	if other := store.IDFor(at, "trigger/t2/1"); other == id {
		t.Error("IDFor gave two keys one id")
	}
	later := store.IDFor(at.Add(time.Millisecond), "trigger/t1/1")
	if later == id || later < id {
		t.Errorf("IDFor a millisecond later = %s, want an id after %s", later, id)
	}
	if now := store.NewID(); now < id {
		t.Errorf("NewID now = %s sorts before IDFor(2026-03-04) = %s", now, id)
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
