package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"
)

// Limits of the optional, informative fields of a session: longer values
// are cut, never refused (they come from request headers).
const (
	MaxSessionUserAgent  = 256
	MaxSessionRemoteAddr = 64
)

// Session is a signed-in browser. Like an API key, the token the browser
// holds is never stored: ID is its SHA-256.
type Session struct {
	// ID is the SHA-256 of the session token.
	ID     []byte `json:"-"`
	UserID string `json:"user_id"`
	// CSRFToken is the random value cookie-authenticated writes must send
	// back (X-CSRF-Token); it is not a secret from the browser, only from
	// other sites.
	CSRFToken  string    `json:"-"`
	CreatedAt  time.Time `json:"created_at"`
	LastSeenAt time.Time `json:"last_seen_at"`
	// IdleExpiresAt moves forward with use (Touch) but never past
	// ExpiresAt, the absolute end of the session.
	IdleExpiresAt time.Time `json:"idle_expires_at"`
	ExpiresAt     time.Time `json:"expires_at"`
	UserAgent     string    `json:"user_agent,omitempty"`
	RemoteAddr    string    `json:"remote_addr,omitempty"`
}

// Validate reports whether s can be written.
func (s Session) Validate() error {
	switch {
	case len(s.ID) != sha256.Size:
		// A wrong length most likely means the token itself.
		return fmt.Errorf("%w: session id is %d bytes; set Session.ID to the SHA-256 (%d bytes) of the token", ErrInvalid, len(s.ID), sha256.Size)
	case s.UserID == "":
		return fmt.Errorf("%w: session user id is empty; set Session.UserID", ErrInvalid)
	case len(s.CSRFToken) < 16:
		return fmt.Errorf("%w: session CSRF token is %d characters; set Session.CSRFToken to a random value of 16 or more", ErrInvalid, len(s.CSRFToken))
	case s.ExpiresAt.IsZero() || s.IdleExpiresAt.IsZero():
		return fmt.Errorf("%w: session has no expiry; set Session.IdleExpiresAt and ExpiresAt", ErrInvalid)
	case s.IdleExpiresAt.After(s.ExpiresAt):
		return fmt.Errorf("%w: session idle expiry %v is after its absolute expiry %v", ErrInvalid, s.IdleExpiresAt, s.ExpiresAt)
	}
	return nil
}

// Sessions stores browser sessions.
type Sessions interface {
	// Create inserts s, stamping CreatedAt and LastSeenAt with the current
	// time and cutting UserAgent and RemoteAddr to their limits. An id
	// stored already gives ErrConflict, an unknown user ErrNotFound.
	Create(ctx context.Context, s Session) (Session, error)
	// GetByHash returns the session whose id is hash while neither expiry
	// has passed; an expired or unknown session gives ErrNotFound. It
	// runs on every cookie-authenticated request.
	GetByHash(ctx context.Context, hash []byte) (Session, error)
	// ListByUser returns the user's live sessions, newest first.
	ListByUser(ctx context.Context, userID string) ([]Session, error)
	// Touch records use at at: LastSeenAt moves forward to at (never
	// back) and IdleExpiresAt to idleExpiresAt, but never past ExpiresAt
	// nor back. An unknown session gives ErrNotFound.
	Touch(ctx context.Context, hash []byte, at, idleExpiresAt time.Time) error
	// Delete removes one session (sign out), or gives ErrNotFound.
	Delete(ctx context.Context, hash []byte) error
	// DeleteByUser removes every session of the user (sign out
	// everywhere) and reports how many.
	DeleteByUser(ctx context.Context, userID string) (int, error)
	// DeleteExpired removes the sessions of every user whose idle or
	// absolute expiry is at or before now, and reports how many.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}

// Invitation lets whoever holds its link join a workspace with a role,
// once, before it expires. The store keeps the SHA-256 of the link's
// token.
type Invitation struct {
	ID          string `json:"id"`
	TokenHash   []byte `json:"-"`
	WorkspaceID string `json:"workspace_id"`
	Role        Role   `json:"role"`
	// Email, when set (normalized), is the only address that may accept.
	Email string `json:"email,omitempty"`
	// CreatedBy is the actor who invited: "user:<id>", "apikey:<id>",
	// "cli", "system".
	CreatedBy  string     `json:"created_by"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	AcceptedAt *time.Time `json:"accepted_at,omitempty"`
	AcceptedBy string     `json:"accepted_by,omitempty"`
}

// Validate reports whether inv can be written.
func (inv Invitation) Validate() error {
	switch {
	case len(inv.TokenHash) != sha256.Size:
		return fmt.Errorf("%w: invitation token hash is %d bytes; set Invitation.TokenHash to the SHA-256 (%d bytes) of the token", ErrInvalid, len(inv.TokenHash), sha256.Size)
	case inv.WorkspaceID == "":
		return fmt.Errorf("%w: invitation workspace id is empty; set Invitation.WorkspaceID", ErrInvalid)
	case inv.CreatedBy == "":
		return fmt.Errorf("%w: invitation has no creator; set Invitation.CreatedBy (\"user:<id>\", \"cli\")", ErrInvalid)
	case inv.ExpiresAt.IsZero():
		return fmt.Errorf("%w: invitation has no expiry; set Invitation.ExpiresAt", ErrInvalid)
	}
	if inv.Email != "" {
		if err := validateEmail(NormalizeEmail(inv.Email), "invitation"); err != nil {
			return err
		}
	}
	return inv.Role.validate("invitation")
}

// Invitations stores workspace invitations.
type Invitations interface {
	// Create inserts inv (Email normalized, an ID assigned when empty,
	// CreatedAt stamped, not accepted). An unknown workspace gives
	// ErrNotFound, a token hash stored already ErrConflict.
	Create(ctx context.Context, inv Invitation) (Invitation, error)
	// GetByHash returns the invitation whatever its state, or ErrNotFound.
	GetByHash(ctx context.Context, hash []byte) (Invitation, error)
	// List returns the workspace's invitations, newest first.
	List(ctx context.Context, workspaceID string) ([]Invitation, error)
	// Accept marks the invitation accepted at at by userID and, in the
	// same transaction, makes the user a member of the workspace with the
	// invitation's role unless they are a member already (their role then
	// stays as it is). Only one Accept of an invitation succeeds: an
	// invitation accepted already or expired by at gives ErrConflict with
	// the stored invitation, so the caller can say which; an unknown one
	// ErrNotFound.
	Accept(ctx context.Context, hash []byte, userID string, at time.Time) (Invitation, error)
	// Delete revokes an invitation of the workspace, or gives ErrNotFound.
	Delete(ctx context.Context, workspaceID, id string) error
}

// SignInLink signs a user in once, before it expires: the setup link of
// `agentcraft users create --link`. The store keeps the SHA-256 of the
// link's token.
type SignInLink struct {
	ID        string     `json:"id"`
	TokenHash []byte     `json:"-"`
	UserID    string     `json:"user_id"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	UsedAt    *time.Time `json:"used_at,omitempty"`
}

// Validate reports whether l can be written.
func (l SignInLink) Validate() error {
	switch {
	case len(l.TokenHash) != sha256.Size:
		return fmt.Errorf("%w: sign-in link token hash is %d bytes; set SignInLink.TokenHash to the SHA-256 (%d bytes) of the token", ErrInvalid, len(l.TokenHash), sha256.Size)
	case l.UserID == "":
		return fmt.Errorf("%w: sign-in link user id is empty; set SignInLink.UserID", ErrInvalid)
	case l.ExpiresAt.IsZero():
		return fmt.Errorf("%w: sign-in link has no expiry; set SignInLink.ExpiresAt", ErrInvalid)
	}
	return nil
}

// SignInLinks stores one-time sign-in links.
type SignInLinks interface {
	// Create inserts l (an ID assigned when empty, CreatedAt stamped, not
	// used). An unknown user gives ErrNotFound.
	Create(ctx context.Context, l SignInLink) (SignInLink, error)
	// Use marks the link used at at. Only one Use succeeds: a link used
	// already or expired by at gives ErrConflict with the stored link; an
	// unknown one ErrNotFound.
	Use(ctx context.Context, hash []byte, at time.Time) (SignInLink, error)
}
