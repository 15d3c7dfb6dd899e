package store

import (
	"context"
	"time"
)

// IdentityDriver holds the verbs of Users, UserIdentities, Members,
// Sessions, Invitations and SignInLinks. Lists order bytewise.
type IdentityDriver interface {
	// UserInsert inserts p.User, complete (email normalized).
	UserInsert(ctx context.Context, p *UserInsertParams) error
	UserGet(ctx context.Context, id string) (User, error)
	// UserGetByEmail takes the normalized address.
	UserGetByEmail(ctx context.Context, email string) (User, error)
	// UserList orders by email.
	UserList(ctx context.Context) ([]User, error)
	UserCount(ctx context.Context) (int, error)
	// UserUpdate sets the non-nil fields of p.Update (email normalized)
	// and updated_at p.Now, and returns the stored row; no row is
	// ErrNotFound.
	UserUpdate(ctx context.Context, p *UserUpdateParams) (User, error)
	// UserSetDisabled sets disabled_at to p.At (keeping an earlier time)
	// or clears it when p.At is nil, stamps updated_at p.Now and returns
	// the stored row.
	UserSetDisabled(ctx context.Context, p *UserSetDisabledParams) (User, error)
	// UserSwapLoginState writes p.Next when the stored state equals p.Prev
	// (NULLs equal); no row matched is ErrNotFound.
	UserSwapLoginState(ctx context.Context, p *UserSwapLoginStateParams) error

	// UserIdentityInsert inserts p.Identity, complete.
	UserIdentityInsert(ctx context.Context, p *UserIdentityInsertParams) error
	UserIdentityGet(ctx context.Context, provider, subject string) (UserIdentity, error)
	// UserIdentityList orders by provider, then subject.
	UserIdentityList(ctx context.Context, userID string) ([]UserIdentity, error)
	UserIdentityDelete(ctx context.Context, provider, subject string) error

	// MemberInsert inserts p.Member, complete; an existing membership is
	// ErrConflict.
	MemberInsert(ctx context.Context, p *MemberInsertParams) error
	// MemberGet, MemberList (by created_at, then user id) and
	// MemberListByUser (by workspace name) join the user's email and
	// display name, and the workspace.
	MemberGet(ctx context.Context, workspaceID, userID string) (Member, error)
	MemberList(ctx context.Context, workspaceID string) ([]Member, error)
	MemberListByUser(ctx context.Context, userID string) ([]Membership, error)
	// MemberSetRole sets the role and updated_at p.Now in a transaction
	// that serializes with the workspace's other member writes, and
	// returns the stored row. Taking the owner role from the workspace's
	// only owner is ErrConflict and writes nothing; no row is ErrNotFound.
	MemberSetRole(ctx context.Context, p *MemberSetRoleParams) (Member, error)
	// MemberDelete deletes the membership as MemberSetRole writes: the
	// workspace's only owner is ErrConflict; no row is ErrNotFound.
	MemberDelete(ctx context.Context, workspaceID, userID string) error

	// SessionInsert inserts p.Session, complete.
	SessionInsert(ctx context.Context, p *SessionInsertParams) error
	// SessionGet returns the session when both expiries are after p.Now.
	SessionGet(ctx context.Context, p *SessionGetParams) (Session, error)
	// SessionListByUser returns the sessions live at p.Now, newest first
	// (created_at, then id, descending).
	SessionListByUser(ctx context.Context, p *SessionListByUserParams) ([]Session, error)
	// SessionTouch sets last_seen_at to the later of it and p.At, and
	// idle_expires_at to the later of it and p.IdleExpiresAt but at most
	// expires_at; no row is ErrNotFound.
	SessionTouch(ctx context.Context, p *SessionTouchParams) error
	SessionDelete(ctx context.Context, hash []byte) error
	// SessionDeleteByUser returns how many it deleted.
	SessionDeleteByUser(ctx context.Context, userID string) (int, error)
	// SessionDeleteExpired deletes the sessions whose idle_expires_at is
	// at or before p.Now (it is never after expires_at) and returns how
	// many.
	SessionDeleteExpired(ctx context.Context, p *SessionDeleteExpiredParams) (int, error)

	// InvitationInsert inserts p.Invitation, complete.
	InvitationInsert(ctx context.Context, p *InvitationInsertParams) error
	InvitationGetByHash(ctx context.Context, hash []byte) (Invitation, error)
	// InvitationList orders newest first (created_at, then id,
	// descending).
	InvitationList(ctx context.Context, workspaceID string) ([]Invitation, error)
	// InvitationAccept, in one transaction, sets accepted_at p.At and
	// accepted_by p.UserID when the invitation is not accepted and
	// expires after p.At, and inserts the membership (role: the
	// invitation's; created_at p.At) unless the user has one; it returns
	// the stored invitation. No invitation matched is ErrNotFound and
	// writes nothing.
	InvitationAccept(ctx context.Context, p *InvitationAcceptParams) (Invitation, error)
	InvitationDelete(ctx context.Context, workspaceID, id string) error

	// SignInLinkInsert inserts p.Link, complete.
	SignInLinkInsert(ctx context.Context, p *SignInLinkInsertParams) error
	SignInLinkGetByHash(ctx context.Context, hash []byte) (SignInLink, error)
	// SignInLinkUse sets used_at p.At when the link is unused and expires
	// after p.At, and returns the stored link; no link matched is
	// ErrNotFound.
	SignInLinkUse(ctx context.Context, p *SignInLinkUseParams) (SignInLink, error)
}

// UserInsertParams is the row UserInsert writes.
type UserInsertParams struct {
	User User
}

// UserUpdateParams are the arguments of UserUpdate.
type UserUpdateParams struct {
	ID     string
	Update UserUpdate
	Now    time.Time
}

// UserSetDisabledParams are the arguments of UserSetDisabled.
type UserSetDisabledParams struct {
	ID  string
	At  *time.Time
	Now time.Time
}

// UserSwapLoginStateParams are the arguments of UserSwapLoginState.
type UserSwapLoginStateParams struct {
	ID         string
	Prev, Next LoginState
}

// UserIdentityInsertParams is the row UserIdentityInsert writes.
type UserIdentityInsertParams struct {
	Identity UserIdentity
}

// MemberInsertParams is the row MemberInsert writes.
type MemberInsertParams struct {
	Member Member
}

// MemberSetRoleParams are the arguments of MemberSetRole.
type MemberSetRoleParams struct {
	WorkspaceID, UserID string
	Role                Role
	Now                 time.Time
}

// SessionInsertParams is the row SessionInsert writes.
type SessionInsertParams struct {
	Session Session
}

// SessionGetParams select a live session.
type SessionGetParams struct {
	Hash []byte
	Now  time.Time
}

// SessionListByUserParams select a user's live sessions.
type SessionListByUserParams struct {
	UserID string
	Now    time.Time
}

// SessionTouchParams are the arguments of SessionTouch.
type SessionTouchParams struct {
	Hash              []byte
	At, IdleExpiresAt time.Time
}

// SessionDeleteExpiredParams hold the time sessions expire by.
type SessionDeleteExpiredParams struct {
	Now time.Time
}

// InvitationInsertParams is the row InvitationInsert writes.
type InvitationInsertParams struct {
	Invitation Invitation
}

// InvitationAcceptParams are the arguments of InvitationAccept.
type InvitationAcceptParams struct {
	Hash   []byte
	UserID string
	At     time.Time
}

// SignInLinkInsertParams is the row SignInLinkInsert writes.
type SignInLinkInsertParams struct {
	Link SignInLink
}

// SignInLinkUseParams are the arguments of SignInLinkUse.
type SignInLinkUseParams struct {
	Hash []byte
	At   time.Time
}
