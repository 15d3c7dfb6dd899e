package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Role is a member's (or an API key's) power in one workspace, highest
// first: owner, admin, member, guest. Package identity says what each may
// do; the store only keeps the value and refuses to leave a workspace
// without an owner.
type Role string

// Roles.
const (
	RoleOwner  Role = "owner"
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
	RoleGuest  Role = "guest"
)

// Rank orders the roles: owner 4, admin 3, member 2, guest 1; anything
// else 0.
func (r Role) Rank() int {
	switch r {
	case RoleOwner:
		return 4
	case RoleAdmin:
		return 3
	case RoleMember:
		return 2
	case RoleGuest:
		return 1
	}
	return 0
}

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool { return r.Rank() > 0 }

func (r Role) validate(what string) error {
	if !r.Valid() {
		return fmt.Errorf("%w: %s role %q is not a role; use owner, admin, member or guest", ErrInvalid, what, r)
	}
	return nil
}

// NormalizeEmail is the form in which the store keeps and looks up e-mail
// addresses: surrounding space trimmed, lower case. Two addresses that
// differ only in case are one account.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// validateEmail checks a normalized address: one @ with text on both
// sides, no spaces or control characters, at most 254 bytes (RFC 5321).
func validateEmail(email, what string) error {
	local, domain, ok := strings.Cut(email, "@")
	switch {
	case email == "":
		return fmt.Errorf("%w: %s e-mail address is empty; set it (--email)", ErrInvalid, what)
	case len(email) > 254:
		return fmt.Errorf("%w: %s e-mail address is %d bytes long; the limit is 254", ErrInvalid, what, len(email))
	case !ok || local == "" || domain == "" || strings.Contains(domain, "@"):
		return fmt.Errorf("%w: %s e-mail address %q is not of the form name@domain", ErrInvalid, what, email)
	case !utf8.ValidString(email) || strings.ContainsFunc(email, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return fmt.Errorf("%w: %s e-mail address %q holds a space or control character", ErrInvalid, what, email)
	}
	return nil
}

// User is a person who signs in: with a password, through an OpenID
// provider (UserIdentities), or with a one-time link. Users belong to no
// workspace by themselves; Members say where they have which role.
type User struct {
	ID string `json:"id"`
	// Email is unique across the installation, stored normalized
	// (NormalizeEmail).
	Email       string `json:"email"`
	DisplayName string `json:"display_name,omitempty"`
	// PasswordHash is a PHC string ("$argon2id$v=19$m=...,t=...,p=...$salt$key");
	// empty for a user who signs in only through OpenID Connect or links.
	PasswordHash string     `json:"-"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	DisabledAt   *time.Time `json:"disabled_at,omitempty"`
	// LoginState is the sign-in throttle, kept in the database so that
	// every process agrees on it.
	LoginState
}

// LoginState is a user's sign-in throttle and last sign-in. Package
// identity decides the policy; the store swaps whole states atomically
// (Users.SwapLoginState).
type LoginState struct {
	// FailedLogins counts wrong passwords since FailedSince.
	FailedLogins int        `json:"failed_logins"`
	FailedSince  *time.Time `json:"-"`
	// Lockouts counts the locks in a row since the last good sign-in,
	// so each lock can last longer than the one before.
	Lockouts    int        `json:"-"`
	LockedUntil *time.Time `json:"locked_until,omitempty"`
	LastLoginAt *time.Time `json:"last_login_at,omitempty"`
}

// normalize makes the times of s what a read returns.
func (s LoginState) normalize() LoginState {
	s.FailedSince = timestampPtr(s.FailedSince)
	s.LockedUntil = timestampPtr(s.LockedUntil)
	s.LastLoginAt = timestampPtr(s.LastLoginAt)
	return s
}

func timestampPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := Timestamp(*t)
	return &u
}

// Validate reports whether u can be written. The e-mail address is
// checked in its normalized form.
func (u User) Validate() error {
	if err := validateEmail(NormalizeEmail(u.Email), "user"); err != nil {
		return err
	}
	if len(u.DisplayName) > 200 {
		return fmt.Errorf("%w: user display name is %d bytes long; the limit is 200", ErrInvalid, len(u.DisplayName))
	}
	if u.PasswordHash != "" && !strings.HasPrefix(u.PasswordHash, "$") {
		// Anything else is most likely the password itself.
		return fmt.Errorf("%w: user password hash is not a PHC string ($argon2id$...); hash the password before storing it", ErrInvalid)
	}
	return nil
}

// UserUpdate holds the fields Users.Update changes; nil leaves a field as
// it is.
type UserUpdate struct {
	Email        *string
	DisplayName  *string
	PasswordHash *string
}

// Users stores users.
type Users interface {
	// Create inserts u and returns it as stored: Email normalized, an ID
	// assigned when empty, CreatedAt and UpdatedAt stamped, DisabledAt
	// and LoginState kept as given. An address already taken (in any
	// case) gives ErrConflict.
	Create(ctx context.Context, u User) (User, error)
	// Get returns the user with id, or ErrNotFound.
	Get(ctx context.Context, id string) (User, error)
	// GetByEmail returns the user with the address, compared normalized,
	// or ErrNotFound.
	GetByEmail(ctx context.Context, email string) (User, error)
	// List returns every user, ordered by e-mail address.
	List(ctx context.Context) ([]User, error)
	// Count returns the number of users (a fresh install has none).
	Count(ctx context.Context) (int, error)
	// Update changes the non-nil fields of upd and stamps UpdatedAt; an
	// address taken by another user gives ErrConflict, an unknown user
	// ErrNotFound.
	Update(ctx context.Context, id string, upd UserUpdate) (User, error)
	// SetDisabled disables the user at the current time, or enables it
	// again; disabling a disabled user keeps the first time.
	SetDisabled(ctx context.Context, id string, disabled bool) (User, error)
	// SwapLoginState replaces the user's LoginState with next when it is
	// still prev (compare and swap), so that concurrent sign-ins in
	// several processes cannot lose a failure. A state that changed
	// meanwhile gives ErrConflict: read the user again and retry.
	SwapLoginState(ctx context.Context, id string, prev, next LoginState) error
}

// UserIdentity links an external identity to a user: an OpenID provider's
// subject (Provider is the issuer URL) or a channel's user id (Provider
// "line" and the LINE user id). Each (Provider, Subject) names one user.
type UserIdentity struct {
	Provider  string    `json:"provider"`
	Subject   string    `json:"subject"`
	UserID    string    `json:"user_id"`
	CreatedAt time.Time `json:"created_at"`
}

// Validate reports whether i can be written.
func (i UserIdentity) Validate() error {
	switch {
	case i.Provider == "":
		return fmt.Errorf("%w: user identity provider is empty; set the issuer URL or channel name (\"line\")", ErrInvalid)
	case i.Subject == "":
		return fmt.Errorf("%w: user identity subject is empty; set the provider's user id", ErrInvalid)
	case i.UserID == "":
		return fmt.Errorf("%w: user identity user id is empty; set UserIdentity.UserID", ErrInvalid)
	case len(i.Provider) > 500 || len(i.Subject) > 500:
		return fmt.Errorf("%w: user identity provider or subject is longer than 500 bytes", ErrInvalid)
	}
	return nil
}

// UserIdentities stores the external identities of users.
type UserIdentities interface {
	// Link inserts i, stamping CreatedAt. A (Provider, Subject) linked
	// already gives ErrConflict; an unknown user ErrNotFound.
	Link(ctx context.Context, i UserIdentity) (UserIdentity, error)
	// Unlink removes the identity, or gives ErrNotFound.
	Unlink(ctx context.Context, provider, subject string) error
	// Lookup returns the identity, whose UserID says who it is, or
	// ErrNotFound.
	Lookup(ctx context.Context, provider, subject string) (UserIdentity, error)
	// List returns the user's identities by provider, then subject.
	List(ctx context.Context, userID string) ([]UserIdentity, error)
}

// Member is a user's role in a workspace.
type Member struct {
	WorkspaceID string    `json:"workspace_id"`
	UserID      string    `json:"user_id"`
	Role        Role      `json:"role"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Email and DisplayName are the user's, filled by reads.
	Email       string `json:"email,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
}

// Validate reports whether m can be written.
func (m Member) Validate() error {
	switch {
	case m.WorkspaceID == "":
		return fmt.Errorf("%w: member workspace id is empty; set Member.WorkspaceID", ErrInvalid)
	case m.UserID == "":
		return fmt.Errorf("%w: member user id is empty; set Member.UserID", ErrInvalid)
	}
	return m.Role.validate("member")
}

// Membership is one workspace of a user, with the user's role in it.
type Membership struct {
	Workspace Workspace `json:"workspace"`
	Role      Role      `json:"role"`
	Since     time.Time `json:"since"`
}

// Members stores who belongs to which workspace with which role. A
// workspace that has owners always keeps at least one: the last owner can
// be neither removed nor given another role.
type Members interface {
	// Add inserts m, stamping CreatedAt and UpdatedAt. A user who is a
	// member already gives ErrConflict; an unknown workspace or user
	// ErrNotFound.
	Add(ctx context.Context, m Member) (Member, error)
	// Get returns the user's membership of the workspace, or ErrNotFound.
	Get(ctx context.Context, workspaceID, userID string) (Member, error)
	// List returns the workspace's members, oldest first.
	List(ctx context.Context, workspaceID string) ([]Member, error)
	// ListByUser returns the user's workspaces with the role in each,
	// ordered by workspace name.
	ListByUser(ctx context.Context, userID string) ([]Membership, error)
	// SetRole changes the member's role and returns the stored row.
	// Demoting the workspace's last owner gives ErrConflict; an unknown
	// member ErrNotFound.
	SetRole(ctx context.Context, workspaceID, userID string, role Role) (Member, error)
	// Remove deletes the membership. Removing the last owner gives
	// ErrConflict; an unknown member ErrNotFound.
	Remove(ctx context.Context, workspaceID, userID string) error
}
