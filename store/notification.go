package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// NotificationStatus is where a notification is in its delivery.
type NotificationStatus string

// Notification statuses. Pending is the only live one.
const (
	NotificationPending NotificationStatus = "pending" // waiting to be sent (at SendAt)
	NotificationSent    NotificationStatus = "sent"
	NotificationFailed  NotificationStatus = "failed" // the channel refused it for good
)

// Valid reports whether s is one of the notification statuses.
func (s NotificationStatus) Valid() bool {
	return s == NotificationPending || s == NotificationSent || s == NotificationFailed
}

// Notification is a message the platform owes someone on a channel: an
// approval card, a task's result, an error, a reminder. It is an outbox
// row: written with the change that causes it, then sent by a worker.
type Notification struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// TaskID is the task it is about, if any.
	TaskID string `json:"task_id,omitempty"`
	// Channel names the channel: "line" when created without one.
	Channel string `json:"channel"`
	// Target is the channel's address: a LINE user, group or room id.
	Target string `json:"target"`
	// Kind says what it is: approval, result, error, reminder.
	Kind    string             `json:"kind"`
	Payload json.RawMessage    `json:"payload,omitempty"`
	Status  NotificationStatus `json:"status"`
	// Error says why the channel refused it.
	Error string `json:"error,omitempty"`
	// SendAt, when set, is when it becomes due (a reminder); nil is now.
	SendAt    *time.Time `json:"send_at,omitempty"`
	SentAt    *time.Time `json:"sent_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

// Validate reports whether n can be created.
func (n Notification) Validate() error {
	switch {
	case n.WorkspaceID == "":
		return fmt.Errorf("%w: notification workspace id is empty; set Notification.WorkspaceID", ErrInvalid)
	case n.Target == "":
		return fmt.Errorf("%w: notification target is empty; set Notification.Target to the channel's address", ErrInvalid)
	case n.Kind == "":
		return fmt.Errorf("%w: notification kind is empty; set Notification.Kind (approval, result, error, reminder)", ErrInvalid)
	case n.Status != "" && n.Status != NotificationPending:
		return fmt.Errorf("%w: notification status %q; a notification is created pending", ErrInvalid, n.Status)
	case len(n.Payload) > 0 && !json.Valid(n.Payload):
		return fmt.Errorf("%w: notification payload is not valid JSON", ErrInvalid)
	}
	return nil
}

// NotificationFilter narrows Notifications.List. Zero fields do not
// filter.
type NotificationFilter struct {
	Status NotificationStatus
	TaskID string
	// Limit caps the rows (newest first); 0 means 100.
	Limit int
}

// Notifications stores the outbox of messages to send.
type Notifications interface {
	// Create inserts n as pending (ID assigned when empty, Channel line
	// when empty, CreatedAt stamped, SentAt and Error cleared) and returns
	// it as stored. An unknown workspace or task gives ErrNotFound.
	Create(ctx context.Context, n Notification) (Notification, error)
	// Get returns the workspace's notification, or ErrNotFound.
	Get(ctx context.Context, workspaceID, id string) (Notification, error)
	// List returns the workspace's notifications, newest first.
	List(ctx context.Context, workspaceID string, f NotificationFilter) ([]Notification, error)
	// Due returns at most limit (0 means 100) pending notifications of
	// every workspace due at now (SendAt nil or at or before now), oldest
	// first. Two senders may read the same row: the one whose MarkSent
	// wins sent it, and a sender passes the notification's ID as the
	// channel's retry key (LINE's X-Line-Retry-Key) so a doubled push is
	// delivered once.
	Due(ctx context.Context, now time.Time, limit int) ([]Notification, error)
	// MarkSent sets a pending notification sent at now; one already sent
	// gives the row as stored and no error (a second sender's report),
	// one failed ErrConflict with the row.
	MarkSent(ctx context.Context, workspaceID, id string, now time.Time) (Notification, error)
	// MarkFailed sets a pending notification failed with errText; one no
	// longer pending gives ErrConflict with the row as stored.
	MarkFailed(ctx context.Context, workspaceID, id, errText string) (Notification, error)
}
