package skill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/store"
)

// Errors of the Service, wrapped with the skill they are about.
var (
	// ErrNotFound: no built-in or workspace skill has the name.
	ErrNotFound = errors.New("skill not found")
	// ErrBuiltin refuses a change to, or the name of, a built-in skill.
	ErrBuiltin = errors.New("skill is built in and read-only")
	// ErrExists refuses creating a skill whose name the workspace has.
	ErrExists = errors.New("skill already exists")
)

// NameError is a skill name in an agent's list that cannot be used:
// Index is its position (skills[Index]), Message why. It wraps
// ErrNotFound for a name no skill has and ErrInvalid otherwise.
type NameError struct {
	Index   int
	Name    string
	Message string
	err     error
}

func (e *NameError) Error() string {
	return fmt.Sprintf("skills[%d]: %q %s", e.Index, e.Name, e.Message)
}

func (e *NameError) Unwrap() error { return e.err }

// Options configure a Service.
type Options struct {
	// Builtins are the read-only skills every workspace has. Default:
	// Builtins(); an empty, non-nil slice: none.
	Builtins []Skill
	// Limits bound the skills written through the Service. Default
	// DefaultLimits.
	Limits *Limits
	// Audit receives the events of changes (skill.create, skill.update,
	// skill.import, skill.delete). Default: none recorded.
	Audit func(context.Context, store.AuditEvent)
}

// Service is the skills of workspaces: the built-ins, read-only and
// shared, and each workspace's own, kept in the store. It is safe for
// concurrent use.
type Service struct {
	st       store.Skills
	builtins map[string]Skill // read-only after New
	lim      Limits
	audit    func(context.Context, store.AuditEvent)

	mu  sync.Mutex // guards gen
	gen map[string]uint64
}

// New returns the Service over st.
func New(st store.Skills, opts *Options) *Service {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Builtins == nil {
		o.Builtins = Builtins()
	}
	if o.Audit == nil {
		o.Audit = func(context.Context, store.AuditEvent) {}
	}
	s := &Service{st: st, builtins: make(map[string]Skill, len(o.Builtins)), lim: o.Limits.orDefault(), audit: o.Audit, gen: map[string]uint64{}}
	for _, b := range o.Builtins {
		b.Builtin = true
		s.builtins[b.Name] = b
	}
	return s
}

// Limits are the limits writes are held to.
func (s *Service) Limits() Limits { return s.lim }

// Generation counts the changes this process made to the workspace's
// skills; a cache of what depends on them (a resolved agent) compares it.
// Changes made by other processes show in Set.Stamp instead.
func (s *Service) Generation(workspaceID string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen[workspaceID]
}

func (s *Service) changed(workspaceID string) {
	s.mu.Lock()
	s.gen[workspaceID]++
	s.mu.Unlock()
}

// builtin returns a copy of the built-in skill called name.
func (s *Service) builtin(name string) (Skill, bool) {
	b, ok := s.builtins[name]
	if ok {
		b.Files = slices.Clone(b.Files)
	}
	return b, ok
}

// List returns the built-in and the workspace's skills, ordered by name,
// each marked Builtin or not; the workspace's come without their files.
func (s *Service) List(ctx context.Context, workspaceID string) ([]Skill, error) {
	rows, err := s.st.List(ctx, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("skill: list: %w", err)
	}
	out := make([]Skill, 0, len(s.builtins)+len(rows))
	for name := range s.builtins {
		b, _ := s.builtin(name)
		out = append(out, b)
	}
	for _, r := range rows {
		if _, shadowed := s.builtins[r.Name]; !shadowed {
			out = append(out, fromRow(r))
		}
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Get returns the skill called name with its instructions and its files'
// paths and sizes (a built-in's with their data); an unknown name gives
// an error wrapping ErrNotFound.
func (s *Service) Get(ctx context.Context, workspaceID, name string) (Skill, error) {
	if b, ok := s.builtin(name); ok {
		return b, nil
	}
	r, err := s.st.Get(ctx, workspaceID, name)
	if errors.Is(err, store.ErrNotFound) {
		return Skill{}, fmt.Errorf("skill: %w: %q", ErrNotFound, name)
	}
	if err != nil {
		return Skill{}, fmt.Errorf("skill: get %q: %w", name, err)
	}
	return fromRow(r), nil
}

// ReadFile returns the content of the file at path of the skill called
// name; an unknown skill or file gives an error wrapping ErrNotFound.
func (s *Service) ReadFile(ctx context.Context, workspaceID, name, path string) ([]byte, error) {
	if b, ok := s.builtins[name]; ok {
		for _, f := range b.Files {
			if f.Path == path {
				return slices.Clone(f.Data), nil
			}
		}
		return nil, fmt.Errorf("skill: %w: %q has no file %q", ErrNotFound, name, path)
	}
	f, err := s.st.ReadFile(ctx, workspaceID, name, path)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("skill: %w: %q has no file %q", ErrNotFound, name, path)
	}
	if err != nil {
		return nil, fmt.Errorf("skill: read %q of %q: %w", path, name, err)
	}
	return f.Data, nil
}

// Create validates sk and stores it as a skill of the workspace, with
// the Data of its files. A built-in's name gives ErrBuiltin, a name the
// workspace has ErrExists, a malformed skill a *FieldError.
func (s *Service) Create(ctx context.Context, workspaceID string, sk Skill) (Skill, error) {
	return s.create(ctx, workspaceID, sk, "skill.create")
}

func (s *Service) create(ctx context.Context, workspaceID string, sk Skill, action string) (Skill, error) {
	if err := sk.Validate(&s.lim); err != nil {
		return Skill{}, err
	}
	if _, ok := s.builtins[sk.Name]; ok {
		return Skill{}, fmt.Errorf("skill: %w: %q; choose another name", ErrBuiltin, sk.Name)
	}
	if sk.Files == nil {
		sk.Files = []File{}
	}
	r, err := s.st.Create(ctx, toRow(workspaceID, sk))
	if errors.Is(err, store.ErrConflict) {
		return Skill{}, fmt.Errorf("skill: %w: %q; update it, or choose another name", ErrExists, sk.Name)
	}
	if err != nil {
		return Skill{}, fmt.Errorf("skill: create %q: %w", sk.Name, err)
	}
	s.changed(workspaceID)
	s.audit(ctx, event(workspaceID, action, r))
	return fromRow(r), nil
}

// Update replaces the workspace's skill called sk.Name: every field, and
// its files when sk.Files is not nil (nil keeps the stored files, which
// then count toward the limits by their sizes). A built-in gives
// ErrBuiltin, an unknown name ErrNotFound.
func (s *Service) Update(ctx context.Context, workspaceID string, sk Skill) (Skill, error) {
	return s.update(ctx, workspaceID, sk, "skill.update")
}

func (s *Service) update(ctx context.Context, workspaceID string, sk Skill, action string) (Skill, error) {
	if _, ok := s.builtins[sk.Name]; ok {
		return Skill{}, fmt.Errorf("skill: %w: %q cannot be changed; create a skill of another name from it", ErrBuiltin, sk.Name)
	}
	check := sk
	if sk.Files == nil {
		old, err := s.Get(ctx, workspaceID, sk.Name)
		if err != nil {
			return Skill{}, err
		}
		check.Files = old.Files
	}
	if err := check.Validate(&s.lim); err != nil {
		return Skill{}, err
	}
	r, err := s.st.Update(ctx, toRow(workspaceID, sk))
	if errors.Is(err, store.ErrNotFound) {
		return Skill{}, fmt.Errorf("skill: %w: %q", ErrNotFound, sk.Name)
	}
	if err != nil {
		return Skill{}, fmt.Errorf("skill: update %q: %w", sk.Name, err)
	}
	s.changed(workspaceID)
	s.audit(ctx, event(workspaceID, action, r))
	return fromRow(r), nil
}

// Import stores an imported skill (FromZip, FromFS): created, or with
// replace, replacing the workspace's skill of the same name, files and
// all. created reports which. Errors are Create's and Update's.
func (s *Service) Import(ctx context.Context, workspaceID string, sk Skill, replace bool) (out Skill, created bool, err error) {
	if sk.Files == nil {
		sk.Files = []File{}
	}
	out, err = s.create(ctx, workspaceID, sk, "skill.import")
	if !replace || !errors.Is(err, ErrExists) {
		return out, err == nil, err
	}
	out, err = s.update(ctx, workspaceID, sk, "skill.import")
	return out, false, err
}

// Delete removes the workspace's skill called name. A built-in gives
// ErrBuiltin, an unknown name ErrNotFound. Agents that name it leave it
// out from their next build, with a warning.
func (s *Service) Delete(ctx context.Context, workspaceID, name string) error {
	if _, ok := s.builtins[name]; ok {
		return fmt.Errorf("skill: %w: %q cannot be deleted", ErrBuiltin, name)
	}
	err := s.st.Delete(ctx, workspaceID, name)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("skill: %w: %q", ErrNotFound, name)
	}
	if err != nil {
		return fmt.Errorf("skill: delete %q: %w", name, err)
	}
	s.changed(workspaceID)
	s.audit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "skill.delete", Target: "skill:" + name})
	return nil
}

// Check reports the first name of an agent's skill list that cannot be
// used, as a *NameError: not a skill name, listed twice, or neither
// built in nor the workspace's.
func (s *Service) Check(ctx context.Context, workspaceID string, names []string) error {
	var stored map[string]bool
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		switch {
		case !ValidName(n):
			return &NameError{Index: i, Name: n, Message: "is not a skill name: " + nameRule, err: ErrInvalid}
		case seen[n]:
			return &NameError{Index: i, Name: n, Message: "is listed twice", err: ErrInvalid}
		}
		seen[n] = true
		if _, ok := s.builtins[n]; ok {
			continue
		}
		if stored == nil {
			rows, err := s.st.List(ctx, workspaceID)
			if err != nil {
				return fmt.Errorf("skill: check: %w", err)
			}
			stored = make(map[string]bool, len(rows))
			for _, r := range rows {
				stored[r.Name] = true
			}
		}
		if !stored[n] {
			return &NameError{Index: i, Name: n, Message: "is not a skill of this workspace: create or import it first (GET /api/skills lists them)", err: ErrNotFound}
		}
	}
	return nil
}

// Set is an agent's skills resolved in its workspace.
type Set struct {
	// Skills are the ones found, in the order named, without files.
	Skills []Skill
	// Warnings name the skills left out (deleted since the agent was
	// saved).
	Warnings []string
	// Stamp changes whenever one of the named skills is created, changed
	// or deleted, by any process; a cache compares it.
	Stamp string
}

// Resolve finds the skills called names in the workspace. A name that is
// neither built in nor stored is left out with a warning: an agent keeps
// working when a skill it names is deleted.
func (s *Service) Resolve(ctx context.Context, workspaceID string, names []string) (Set, error) {
	var set Set
	if len(names) == 0 {
		return set, nil
	}
	rows, err := s.st.List(ctx, workspaceID)
	if err != nil {
		return Set{}, fmt.Errorf("skill: resolve: %w", err)
	}
	byName := make(map[string]store.Skill, len(rows))
	for _, r := range rows {
		byName[r.Name] = r
	}
	var stamp strings.Builder
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		stamp.WriteString(n)
		if b, ok := s.builtins[n]; ok {
			b.Files, b.Instructions = nil, ""
			set.Skills = append(set.Skills, b)
			stamp.WriteString("@builtin;")
			continue
		}
		r, ok := byName[n]
		if !ok {
			set.Warnings = append(set.Warnings, fmt.Sprintf("skill %q left out: it is not a skill of this workspace any more", n))
			stamp.WriteString("@missing;")
			continue
		}
		sk := fromRow(r)
		sk.Instructions = ""
		set.Skills = append(set.Skills, sk)
		stamp.WriteString("@" + strconv.FormatInt(r.UpdatedAt.UnixMicro(), 10) + ";")
	}
	set.Stamp = stamp.String()
	return set, nil
}

func event(workspaceID, action string, r store.Skill) store.AuditEvent {
	return store.AuditEvent{WorkspaceID: workspaceID, Action: action, Target: "skill:" + r.Name,
		Details: audit.Details(map[string]any{"files": len(r.Files)})}
}

func toRow(workspaceID string, sk Skill) store.Skill {
	r := store.Skill{WorkspaceID: workspaceID, Name: sk.Name, Description: sk.Description, Instructions: sk.Instructions,
		License: sk.License, Compatibility: sk.Compatibility, AllowedTools: sk.AllowedTools, Metadata: sk.Metadata}
	if sk.Files != nil {
		r.Files = make([]store.SkillFile, len(sk.Files))
		for i, f := range sk.Files {
			r.Files[i] = store.SkillFile{Path: f.Path, Data: f.Data}
		}
	}
	return r
}

func fromRow(r store.Skill) Skill {
	sk := Skill{Name: r.Name, Description: r.Description, Instructions: r.Instructions, License: r.License,
		Compatibility: r.Compatibility, AllowedTools: r.AllowedTools, Metadata: r.Metadata, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.Files != nil {
		sk.Files = make([]File, len(r.Files))
		for i, f := range r.Files {
			sk.Files[i] = File{Path: f.Path, Size: f.Size}
		}
	}
	return sk
}
