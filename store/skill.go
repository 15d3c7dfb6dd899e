package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Ceilings of a stored skill. Package skill applies tighter, configurable
// limits to what it accepts; these only keep a row the database can hold
// and a read that cannot run away.
const (
	// MaxSkillFiles is the most resource files a skill may keep.
	MaxSkillFiles = 1000
	// MaxSkillBytes bounds the instructions plus every resource file of
	// one skill.
	MaxSkillBytes = 64 << 20
)

// Skill is a workspace's skill in the Agent Skills format (package skill):
// the front matter of its SKILL.md, its instructions (the Markdown below
// the front matter) and its resource files.
type Skill struct {
	WorkspaceID string `json:"workspace_id"`
	// Name is unique within the workspace.
	Name         string `json:"name"`
	Description  string `json:"description"`
	Instructions string `json:"instructions"`
	// License, Compatibility and AllowedTools are the optional front
	// matter fields of the same names; "" when absent.
	License       string `json:"license,omitempty"`
	Compatibility string `json:"compatibility,omitempty"`
	AllowedTools  string `json:"allowed_tools,omitempty"`
	// Metadata is the front matter's metadata mapping; nil when absent.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Files are the resource files, ordered by path. Reads return their
	// paths and sizes only (Data nil; SkillFiles.ReadFile reads one).
	// Writes store Data; on Update, nil Files keeps the stored files and
	// a non-nil slice, even empty, replaces them.
	Files     []SkillFile `json:"files"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// SkillFile is one resource file of a skill.
type SkillFile struct {
	// Path is relative to the skill's folder, slash-separated, such as
	// "references/template.md".
	Path string `json:"path"`
	// Size is len(Data) as stored.
	Size int64 `json:"size"`
	// Data is the content on writes and on ReadFile; nil on reads of
	// the skill.
	Data []byte `json:"-"`
}

// Validate reports whether s can be written. It checks what the store
// needs (workspace, name, description, distinct file paths, the
// ceilings); package skill checks the format.
func (s Skill) Validate() error {
	switch {
	case s.WorkspaceID == "":
		return fmt.Errorf("%w: skill workspace id is empty; set Skill.WorkspaceID", ErrInvalid)
	case strings.TrimSpace(s.Name) == "":
		return fmt.Errorf("%w: skill name is empty; set Skill.Name", ErrInvalid)
	case strings.TrimSpace(s.Description) == "":
		return fmt.Errorf("%w: skill %q has no description; set Skill.Description", ErrInvalid, s.Name)
	case len(s.Files) > MaxSkillFiles:
		return fmt.Errorf("%w: skill %q has %d files, more than %d", ErrInvalid, s.Name, len(s.Files), MaxSkillFiles)
	}
	total := int64(len(s.Instructions))
	seen := make(map[string]bool, len(s.Files))
	for _, f := range s.Files {
		if f.Path == "" || seen[f.Path] {
			return fmt.Errorf("%w: skill %q has an empty or repeated file path %q", ErrInvalid, s.Name, f.Path)
		}
		seen[f.Path] = true
		total += int64(len(f.Data))
	}
	if total > MaxSkillBytes {
		return fmt.Errorf("%w: skill %q holds %d bytes, more than %d", ErrInvalid, s.Name, total, MaxSkillBytes)
	}
	return nil
}

// Skills stores the skills of workspaces.
type Skills interface {
	// Create inserts s with its files and returns it as stored (files
	// without their data). A name taken in the workspace gives
	// ErrConflict; an unknown workspace gives ErrNotFound.
	Create(ctx context.Context, s Skill) (Skill, error)
	// Get returns the workspace's skill named name with its files' paths
	// and sizes, or ErrNotFound.
	Get(ctx context.Context, workspaceID, name string) (Skill, error)
	// List returns the workspace's skills ordered by name, without their
	// files (Files nil).
	List(ctx context.Context, workspaceID string) ([]Skill, error)
	// Update replaces every field of the skill named s.Name in
	// s.WorkspaceID except CreatedAt, and its files when s.Files is not
	// nil, in one transaction; it stamps UpdatedAt and returns the row as
	// Get would. An unknown skill gives ErrNotFound.
	Update(ctx context.Context, s Skill) (Skill, error)
	// ReadFile returns the file at path of the workspace's skill named
	// name, Data included, or ErrNotFound.
	ReadFile(ctx context.Context, workspaceID, name, path string) (SkillFile, error)
	// Delete removes the skill with its files, or gives ErrNotFound.
	Delete(ctx context.Context, workspaceID, name string) error
}
