package store

import (
	"context"
	"fmt"
	"time"
)

// Workspace is a tenant: every other row belongs to exactly one.
type Workspace struct {
	ID string `json:"id"`
	// Name is unique across the installation.
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Validate reports whether w can be written.
func (w Workspace) Validate() error {
	if w.Name == "" {
		return fmt.Errorf("%w: workspace name is empty; set Workspace.Name", ErrInvalid)
	}
	return nil
}

// Workspaces stores workspaces.
type Workspaces interface {
	// Create inserts w and returns it as stored. It assigns an ID when
	// w.ID is empty and stamps CreatedAt. A taken name gives ErrConflict.
	Create(ctx context.Context, w Workspace) (Workspace, error)
	// Get returns the workspace with the given id, or ErrNotFound.
	Get(ctx context.Context, id string) (Workspace, error)
	// GetByName returns the workspace with the given name, or ErrNotFound.
	GetByName(ctx context.Context, name string) (Workspace, error)
	// GetOrCreate returns the workspace named name, creating it first when
	// it does not exist. Concurrent callers get the same workspace.
	GetOrCreate(ctx context.Context, name string) (Workspace, error)
	// List returns every workspace ordered by name.
	List(ctx context.Context) ([]Workspace, error)
	// Rename gives the workspace another name and returns it. A taken
	// name gives ErrConflict, an unknown workspace ErrNotFound.
	Rename(ctx context.Context, id, name string) (Workspace, error)
	// Delete removes the workspace and, by cascade, every row that
	// belongs to it (keys, members, agents, runs, knowledge bases, ...);
	// the audit log keeps its events. Search indexes of its knowledge
	// bases are not rows of the store: drop them first. An unknown
	// workspace gives ErrNotFound.
	Delete(ctx context.Context, id string) error
}
