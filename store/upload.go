package store

import (
	"context"
	"fmt"
	"time"
)

// Upload is a file a client sent to POST /api/upload, kept until ExpiresAt
// so a chat or an ingest job can use it.
type Upload struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	ContentType string `json:"content_type,omitempty"`
	Size        int64  `json:"size"`
	// Data is the content; Get fills it, Info leaves it nil.
	Data      []byte    `json:"-"`
	ExpiresAt time.Time `json:"expires_at"`
	CreatedAt time.Time `json:"created_at"`
}

// Validate reports whether u can be written.
func (u Upload) Validate() error {
	switch {
	case u.WorkspaceID == "":
		return fmt.Errorf("%w: upload workspace id is empty", ErrInvalid)
	case u.Name == "":
		return fmt.Errorf("%w: upload has no file name", ErrInvalid)
	case u.ExpiresAt.IsZero():
		return fmt.Errorf("%w: upload %q has no expiry; set Upload.ExpiresAt", ErrInvalid, u.Name)
	case int64(len(u.Data)) != u.Size:
		return fmt.Errorf("%w: upload %q size %d does not match its %d bytes of data", ErrInvalid, u.Name, u.Size, len(u.Data))
	}
	return nil
}

// Uploads stores uploaded files.
type Uploads interface {
	// Put inserts u, assigning an ID when empty. An unknown workspace
	// gives ErrNotFound.
	Put(ctx context.Context, u Upload) (Upload, error)
	// Get returns the workspace's upload with its data, or ErrNotFound
	// (also when it has expired, even if not yet deleted).
	Get(ctx context.Context, workspaceID, id string) (Upload, error)
	// Info is Get without the data.
	Info(ctx context.Context, workspaceID, id string) (Upload, error)
	// Delete removes the upload, or gives ErrNotFound.
	Delete(ctx context.Context, workspaceID, id string) error
	// DeleteExpired removes uploads of every workspace whose ExpiresAt is
	// at or before now and reports how many.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}
