package skill_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/skill"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

func newStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st
}

// auditLog collects the events a Service records.
type auditLog struct {
	mu     sync.Mutex // guards events
	events []string
}

func (l *auditLog) record(_ context.Context, e store.AuditEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e.Action+" "+e.Target+" "+string(e.Details))
}

func (l *auditLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.events
	l.events = nil
	return out
}

func newService(t *testing.T) (*skill.Service, string, string, *auditLog) {
	t.Helper()
	st := newStore(t)
	a, err := st.Workspaces().Create(t.Context(), store.Workspace{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Workspaces().Create(t.Context(), store.Workspace{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	log := &auditLog{}
	return skill.New(st.Skills(), &skill.Options{Audit: log.record}), a.ID, b.ID, log
}

func names(skills []skill.Skill) []string {
	var out []string
	for _, s := range skills {
		out = append(out, s.Name)
	}
	return out
}

func TestServiceCRUD(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	svc, a, b, log := newService(t)

	list, err := svc.List(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"japanese-business-email", "meeting-notes", "writing-style-guide"}, names(list)); diff != "" {
		t.Errorf("List of a new workspace: the built-ins (-want +got):\n%s", diff)
	}

	notes := skill.Skill{Name: "notes", Description: "Take notes.", Instructions: "# Notes\n", Metadata: map[string]string{"v": "1"},
		Files: []skill.File{{Path: "templates/a.md", Data: []byte("AAA")}}}
	got, err := svc.Create(ctx, a, notes)
	if err != nil {
		t.Fatalf("Create = %v", err)
	}
	if got.Builtin || got.CreatedAt.IsZero() || !cmp.Equal(got.Files, []skill.File{{Path: "templates/a.md", Size: 3}}) {
		t.Errorf("Create = %+v", got)
	}
	_, err = svc.Create(ctx, a, notes)
	if !errors.Is(err, skill.ErrExists) {
		t.Errorf("Create twice = %v, want ErrExists", err)
	}
	_, err = svc.Create(ctx, a, skill.Skill{Name: "meeting-notes", Description: "mine", Instructions: "x"})
	if !errors.Is(err, skill.ErrBuiltin) {
		t.Errorf("Create(a built-in's name) = %v, want ErrBuiltin", err)
	}
	_, err = svc.Create(ctx, a, skill.Skill{Name: "Bad", Description: "d", Instructions: "x"})
	var fe *skill.FieldError
	if !errors.As(err, &fe) || fe.Field != "name" {
		t.Errorf("Create(bad name) = %v, want a name error", err)
	}

	list, _ = svc.List(ctx, a)
	if diff := cmp.Diff([]string{"japanese-business-email", "meeting-notes", "notes", "writing-style-guide"}, names(list)); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if list, _ := svc.List(ctx, b); len(list) != 3 {
		t.Errorf("List(b) = %v; a's skill leaked into b", names(list))
	}
	if _, err := svc.Get(ctx, b, "notes"); !errors.Is(err, skill.ErrNotFound) {
		t.Errorf("Get(b, notes) = %v, want ErrNotFound", err)
	}

	// Update without files keeps them; the file still reads.
	up, err := svc.Update(ctx, a, skill.Skill{Name: "notes", Description: "Take better notes.", Instructions: "# Notes v2\n"})
	if err != nil {
		t.Fatalf("Update = %v", err)
	}
	if up.Description != "Take better notes." || len(up.Files) != 1 || up.Metadata != nil {
		t.Errorf("Update = %+v", up)
	}
	if data, err := svc.ReadFile(ctx, a, "notes", "templates/a.md"); err != nil || string(data) != "AAA" {
		t.Errorf("ReadFile after update = %q, %v", data, err)
	}
	if _, err := svc.ReadFile(ctx, a, "notes", "nope.md"); !errors.Is(err, skill.ErrNotFound) {
		t.Errorf("ReadFile(unknown file) = %v", err)
	}
	if _, err := svc.Update(ctx, a, skill.Skill{Name: "writing-style-guide", Description: "d", Instructions: "x"}); !errors.Is(err, skill.ErrBuiltin) {
		t.Errorf("Update(built-in) = %v, want ErrBuiltin", err)
	}
	if _, err := svc.Update(ctx, a, skill.Skill{Name: "ghost", Description: "d", Instructions: "x"}); !errors.Is(err, skill.ErrNotFound) {
		t.Errorf("Update(unknown) = %v, want ErrNotFound", err)
	}
	// A built-in's files read from memory.
	if data, err := svc.ReadFile(ctx, b, "meeting-notes", "templates/minutes.md"); err != nil || !strings.Contains(string(data), "Action items") {
		t.Errorf("ReadFile(built-in template) = %.40q, %v", data, err)
	}

	// Import: refused over an existing skill unless replace.
	imp := skill.Skill{Name: "notes", Description: "Imported.", Instructions: "# Imported\n", Files: []skill.File{{Path: "b.md", Data: []byte("B")}}}
	if _, _, err := svc.Import(ctx, a, imp, false); !errors.Is(err, skill.ErrExists) {
		t.Errorf("Import(existing, no replace) = %v, want ErrExists", err)
	}
	out, created, err := svc.Import(ctx, a, imp, true)
	if err != nil || created || !cmp.Equal(out.Files, []skill.File{{Path: "b.md", Size: 1}}) {
		t.Errorf("Import(replace) = %+v, created %v, %v; want the files replaced", out, created, err)
	}
	if _, created, err := svc.Import(ctx, b, imp, true); err != nil || !created {
		t.Errorf("Import(new in b) = created %v, %v", created, err)
	}

	if err := svc.Delete(ctx, a, "meeting-notes"); !errors.Is(err, skill.ErrBuiltin) {
		t.Errorf("Delete(built-in) = %v", err)
	}
	if err := svc.Delete(ctx, a, "notes"); err != nil {
		t.Fatalf("Delete = %v", err)
	}
	if err := svc.Delete(ctx, a, "notes"); !errors.Is(err, skill.ErrNotFound) {
		t.Errorf("Delete twice = %v", err)
	}

	want := []string{
		`skill.create skill:notes {"files":1}`,
		`skill.update skill:notes {"files":1}`,
		`skill.import skill:notes {"files":1}`,
		`skill.import skill:notes {"files":1}`,
		`skill.delete skill:notes `,
	}
	if diff := cmp.Diff(want, log.take()); diff != "" {
		t.Errorf("audit events (-want +got); refused changes record none:\n%s", diff)
	}
}

func TestServiceLimits(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := newStore(t)
	ws, _ := st.Workspaces().Create(ctx, store.Workspace{Name: "a"})
	svc := skill.New(st.Skills(), &skill.Options{Builtins: []skill.Skill{}, Limits: &skill.Limits{MaxFiles: 2, MaxFileBytes: 10, MaxTotalBytes: 12}})
	if list, _ := svc.List(ctx, ws.ID); len(list) != 0 {
		t.Errorf("List with no built-ins = %v", names(list))
	}
	if _, err := svc.Create(ctx, ws.ID, skill.Skill{Name: "a", Description: "d", Instructions: "i",
		Files: []skill.File{{Path: "f", Data: []byte("0123456789")}}}); err != nil {
		t.Fatal(err)
	}
	// The kept file counts: 10 bytes of it plus 3 of instructions.
	_, err := svc.Update(ctx, ws.ID, skill.Skill{Name: "a", Description: "d", Instructions: "iii"})
	if !errors.Is(err, skill.ErrInvalid) || !strings.Contains(err.Error(), "13 bytes in all") {
		t.Errorf("Update over the total with kept files = %v", err)
	}
}

func TestServiceCheckAndResolve(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	svc, a, b, _ := newService(t)
	if _, err := svc.Create(ctx, a, skill.Skill{Name: "notes", Description: "Take notes.", Instructions: "# Notes\n"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Check(ctx, a, []string{"meeting-notes", "notes"}); err != nil {
		t.Errorf("Check(known) = %v", err)
	}
	for _, tc := range []struct {
		names []string
		index int
		want  error
		says  string
	}{
		{[]string{"meeting-notes", "nope"}, 1, skill.ErrNotFound, "not a skill of this workspace"},
		{[]string{"notes", "Bad Name"}, 1, skill.ErrInvalid, "not a skill name"},
		{[]string{"notes", "notes"}, 1, skill.ErrInvalid, "twice"},
	} {
		err := svc.Check(ctx, a, tc.names)
		var ne *skill.NameError
		if !errors.As(err, &ne) || ne.Index != tc.index || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Check(%v) = %v; want skills[%d] saying %q", tc.names, err, tc.index, tc.says)
		}
	}
	if err := svc.Check(ctx, b, []string{"notes"}); !errors.Is(err, skill.ErrNotFound) || !strings.HasPrefix(err.Error(), `skills[0]: "notes"`) {
		t.Errorf("Check(b, a's skill) = %v", err)
	}

	set, err := svc.Resolve(ctx, a, []string{"notes", "ghost", "meeting-notes"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"notes", "meeting-notes"}, names(set.Skills)); diff != "" {
		t.Errorf("Resolve skills (-want +got):\n%s", diff)
	}
	if len(set.Warnings) != 1 || !strings.Contains(set.Warnings[0], `"ghost"`) {
		t.Errorf("Resolve warnings = %v", set.Warnings)
	}
	for _, s := range set.Skills {
		if s.Instructions != "" || s.Description == "" {
			t.Errorf("Resolve gave %s instructions %q, description %q; only descriptions are needed", s.Name, s.Instructions, s.Description)
		}
	}
	// The stamp changes with an edit (from any process: it reads the
	// store), and the generation with an edit from this one.
	gen := svc.Generation(a)
	if _, err := svc.Update(ctx, a, skill.Skill{Name: "notes", Description: "Take better notes.", Instructions: "x"}); err != nil {
		t.Fatal(err)
	}
	again, _ := svc.Resolve(ctx, a, []string{"notes", "ghost", "meeting-notes"})
	if again.Stamp == set.Stamp {
		t.Errorf("Stamp %q unchanged by an update", again.Stamp)
	}
	if svc.Generation(a) == gen || svc.Generation(b) != 0 {
		t.Errorf("Generation(a) %d → %d, Generation(b) %d; want a moved and b not", gen, svc.Generation(a), svc.Generation(b))
	}
}
