package store

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// skills is Skills on a Driver.
type skills struct{ c Core }

// prepare validates s and returns the row a write stores: the caller's
// files copied and ordered by path, their sizes set, empty metadata as
// nil, stamped now.
func (skills) prepare(s Skill) (*SkillWriteParams, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Files != nil {
		files := make([]SkillFile, len(s.Files))
		for i, f := range s.Files {
			files[i] = SkillFile{Path: f.Path, Size: int64(len(f.Data)), Data: append([]byte{}, f.Data...)}
		}
		slices.SortFunc(files, func(a, b SkillFile) int { return strings.Compare(a.Path, b.Path) })
		s.Files = files
	}
	var meta []byte
	if len(s.Metadata) > 0 {
		s.Metadata = maps.Clone(s.Metadata)
		b, err := json.Marshal(s.Metadata)
		if err != nil {
			return nil, fmt.Errorf("encode metadata: %w", err)
		}
		meta = b
	} else {
		s.Metadata = nil
	}
	t := now()
	s.CreatedAt, s.UpdatedAt = t, t
	return &SkillWriteParams{Skill: s, Metadata: meta}, nil
}

func (r skills) Create(ctx context.Context, s Skill) (Skill, error) {
	p, err := r.prepare(s)
	if err != nil {
		return Skill{}, r.c.errorf("create skill: %w", err)
	}
	if err := r.c.d.SkillInsert(ctx, p); err != nil {
		return Skill{}, r.c.errorf("create skill %q: %w", s.Name, err)
	}
	return r.Get(ctx, s.WorkspaceID, s.Name)
}

func (r skills) Get(ctx context.Context, workspaceID, name string) (Skill, error) {
	s, err := r.c.d.SkillGet(ctx, workspaceID, name)
	if err != nil {
		return Skill{}, r.c.errorf("get skill %q: %w", name, err)
	}
	return s, nil
}

func (r skills) List(ctx context.Context, workspaceID string) ([]Skill, error) {
	out, err := r.c.d.SkillList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list skills: %w", err)
	}
	return out, nil
}

func (r skills) Update(ctx context.Context, s Skill) (Skill, error) {
	p, err := r.prepare(s)
	if err != nil {
		return Skill{}, r.c.errorf("update skill: %w", err)
	}
	if err := r.c.d.SkillUpdate(ctx, p); err != nil {
		return Skill{}, r.c.errorf("update skill %q: %w", s.Name, err)
	}
	return r.Get(ctx, s.WorkspaceID, s.Name)
}

func (r skills) ReadFile(ctx context.Context, workspaceID, name, path string) (SkillFile, error) {
	f, err := r.c.d.SkillFileGet(ctx, workspaceID, name, path)
	if err != nil {
		return SkillFile{}, r.c.errorf("read file %q of skill %q: %w", path, name, err)
	}
	return f, nil
}

func (r skills) Delete(ctx context.Context, workspaceID, name string) error {
	if err := r.c.d.SkillDelete(ctx, workspaceID, name); err != nil {
		return r.c.errorf("delete skill %q: %w", name, err)
	}
	return nil
}
