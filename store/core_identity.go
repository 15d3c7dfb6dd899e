package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Users implements Store.
func (c Core) Users() Users { return users{c} }

// UserIdentities implements Store.
func (c Core) UserIdentities() UserIdentities { return userIdentities{c} }

// Members implements Store.
func (c Core) Members() Members { return members{c} }

// Sessions implements Store.
func (c Core) Sessions() Sessions { return sessions{c} }

// Invitations implements Store.
func (c Core) Invitations() Invitations { return invitations{c} }

// SignInLinks implements Store.
func (c Core) SignInLinks() SignInLinks { return signInLinks{c} }

// missingParent words the ErrNotFound of an insert refused by a foreign
// key: the drivers cannot tell which parent is missing, so look.
func (c Core) missingParent(ctx context.Context, err error, workspaceID, userID string) error {
	if !isNotFound(err) {
		return err
	}
	if workspaceID != "" {
		if _, werr := c.d.WorkspaceGet(ctx, workspaceID); isNotFound(werr) {
			return fmt.Errorf("%w: workspace %s does not exist", ErrNotFound, workspaceID)
		}
	}
	if userID != "" {
		if _, uerr := c.d.UserGet(ctx, userID); isNotFound(uerr) {
			return fmt.Errorf("%w: user %s does not exist", ErrNotFound, userID)
		}
	}
	return err
}

// users is Users on a Driver.
type users struct{ c Core }

func (r users) Create(ctx context.Context, u User) (User, error) {
	if err := u.Validate(); err != nil {
		return User{}, r.c.errorf("create user: %w", err)
	}
	if u.ID == "" {
		u.ID = NewID()
	}
	u.Email = NormalizeEmail(u.Email)
	t := now()
	u.CreatedAt, u.UpdatedAt = t, t
	u.DisabledAt = timestampPtr(u.DisabledAt)
	u.LoginState = u.LoginState.normalize()
	if err := r.c.d.UserInsert(ctx, &UserInsertParams{User: u}); err != nil {
		if errors.Is(err, ErrConflict) {
			// The driver's "already exists" would not say what exists.
			return User{}, r.c.errorf("create user: %w: a user with e-mail address %q exists already", ErrConflict, u.Email)
		}
		return User{}, r.c.errorf("create user: %w", err)
	}
	return u, nil
}

func (r users) Get(ctx context.Context, id string) (User, error) {
	u, err := r.c.d.UserGet(ctx, id)
	if err != nil {
		return User{}, r.c.errorf("get user %s: %w", id, err)
	}
	return u, nil
}

func (r users) GetByEmail(ctx context.Context, email string) (User, error) {
	u, err := r.c.d.UserGetByEmail(ctx, NormalizeEmail(email))
	if err != nil {
		// Never the address in the message: errors get logged.
		return User{}, r.c.errorf("get user by e-mail address: %w", err)
	}
	return u, nil
}

func (r users) List(ctx context.Context) ([]User, error) {
	out, err := r.c.d.UserList(ctx)
	if err != nil {
		return nil, r.c.errorf("list users: %w", err)
	}
	return out, nil
}

func (r users) Count(ctx context.Context) (int, error) {
	n, err := r.c.d.UserCount(ctx)
	if err != nil {
		return 0, r.c.errorf("count users: %w", err)
	}
	return n, nil
}

func (r users) Update(ctx context.Context, id string, upd UserUpdate) (User, error) {
	if upd.Email != nil {
		e := NormalizeEmail(*upd.Email)
		if err := validateEmail(e, "user"); err != nil {
			return User{}, r.c.errorf("update user %s: %w", id, err)
		}
		upd.Email = &e
	}
	if upd.DisplayName != nil || upd.PasswordHash != nil {
		// Validate the new values with a stand-in address.
		probe := User{Email: "x@x"}
		if upd.DisplayName != nil {
			probe.DisplayName = *upd.DisplayName
		}
		if upd.PasswordHash != nil {
			probe.PasswordHash = *upd.PasswordHash
		}
		if err := probe.Validate(); err != nil {
			return User{}, r.c.errorf("update user %s: %w", id, err)
		}
	}
	u, err := r.c.d.UserUpdate(ctx, &UserUpdateParams{ID: id, Update: upd, Now: now()})
	if errors.Is(err, ErrConflict) {
		return User{}, r.c.errorf("update user %s: %w: another user has that e-mail address", id, ErrConflict)
	}
	if err != nil {
		return User{}, r.c.errorf("update user %s: %w", id, err)
	}
	return u, nil
}

func (r users) SetDisabled(ctx context.Context, id string, disabled bool) (User, error) {
	t := now()
	p := &UserSetDisabledParams{ID: id, Now: t}
	if disabled {
		p.At = &t
	}
	u, err := r.c.d.UserSetDisabled(ctx, p)
	if err != nil {
		return User{}, r.c.errorf("set user %s disabled=%t: %w", id, disabled, err)
	}
	return u, nil
}

func (r users) SwapLoginState(ctx context.Context, id string, prev, next LoginState) error {
	if next.FailedLogins < 0 || next.Lockouts < 0 {
		return r.c.errorf("swap login state of user %s: %w: failed logins %d and lockouts %d must not be negative",
			id, ErrInvalid, next.FailedLogins, next.Lockouts)
	}
	err := r.c.d.UserSwapLoginState(ctx, &UserSwapLoginStateParams{ID: id, Prev: prev.normalize(), Next: next.normalize()})
	if isNotFound(err) {
		if _, gerr := r.c.d.UserGet(ctx, id); gerr != nil {
			return r.c.errorf("swap login state of user %s: %w", id, gerr)
		}
		return r.c.errorf("swap login state of user %s: %w: it changed meanwhile; read the user again", id, ErrConflict)
	}
	if err != nil {
		return r.c.errorf("swap login state of user %s: %w", id, err)
	}
	return nil
}

// userIdentities is UserIdentities on a Driver.
type userIdentities struct{ c Core }

func (r userIdentities) Link(ctx context.Context, i UserIdentity) (UserIdentity, error) {
	if err := i.Validate(); err != nil {
		return UserIdentity{}, r.c.errorf("link user identity: %w", err)
	}
	i.CreatedAt = now()
	if err := r.c.d.UserIdentityInsert(ctx, &UserIdentityInsertParams{Identity: i}); err != nil {
		if errors.Is(err, ErrConflict) {
			return UserIdentity{}, r.c.errorf("link user identity of %s: %w: the identity is linked to a user already", i.Provider, ErrConflict)
		}
		return UserIdentity{}, r.c.errorf("link user identity of %s: %w", i.Provider, r.c.missingParent(ctx, err, "", i.UserID))
	}
	return i, nil
}

func (r userIdentities) Unlink(ctx context.Context, provider, subject string) error {
	if err := r.c.d.UserIdentityDelete(ctx, provider, subject); err != nil {
		return r.c.errorf("unlink user identity of %s: %w", provider, err)
	}
	return nil
}

func (r userIdentities) Lookup(ctx context.Context, provider, subject string) (UserIdentity, error) {
	i, err := r.c.d.UserIdentityGet(ctx, provider, subject)
	if err != nil {
		return UserIdentity{}, r.c.errorf("look up user identity of %s: %w", provider, err)
	}
	return i, nil
}

func (r userIdentities) List(ctx context.Context, userID string) ([]UserIdentity, error) {
	out, err := r.c.d.UserIdentityList(ctx, userID)
	if err != nil {
		return nil, r.c.errorf("list identities of user %s: %w", userID, err)
	}
	return out, nil
}

// members is Members on a Driver.
type members struct{ c Core }

func (r members) Add(ctx context.Context, m Member) (Member, error) {
	if err := m.Validate(); err != nil {
		return Member{}, r.c.errorf("add member: %w", err)
	}
	t := now()
	m.CreatedAt, m.UpdatedAt = t, t
	if err := r.c.d.MemberInsert(ctx, &MemberInsertParams{Member: m}); err != nil {
		if errors.Is(err, ErrConflict) {
			return Member{}, r.c.errorf("add member %s to workspace %s: %w: the user is a member already; change the role instead", m.UserID, m.WorkspaceID, ErrConflict)
		}
		return Member{}, r.c.errorf("add member %s to workspace %s: %w", m.UserID, m.WorkspaceID, r.c.missingParent(ctx, err, m.WorkspaceID, m.UserID))
	}
	return r.Get(ctx, m.WorkspaceID, m.UserID)
}

func (r members) Get(ctx context.Context, workspaceID, userID string) (Member, error) {
	m, err := r.c.d.MemberGet(ctx, workspaceID, userID)
	if err != nil {
		return Member{}, r.c.errorf("get member %s of workspace %s: %w", userID, workspaceID, err)
	}
	return m, nil
}

func (r members) List(ctx context.Context, workspaceID string) ([]Member, error) {
	out, err := r.c.d.MemberList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list members of workspace %s: %w", workspaceID, err)
	}
	return out, nil
}

func (r members) ListByUser(ctx context.Context, userID string) ([]Membership, error) {
	out, err := r.c.d.MemberListByUser(ctx, userID)
	if err != nil {
		return nil, r.c.errorf("list workspaces of user %s: %w", userID, err)
	}
	return out, nil
}

// lastOwner is the refusal of a write that would leave a workspace
// without an owner.
func lastOwner(userID, workspaceID string) error {
	return fmt.Errorf("%w: user %s is the last owner of workspace %s; make another member owner first", ErrConflict, userID, workspaceID)
}

func (r members) SetRole(ctx context.Context, workspaceID, userID string, role Role) (Member, error) {
	if err := role.validate("member"); err != nil {
		return Member{}, r.c.errorf("set role of member %s: %w", userID, err)
	}
	m, err := r.c.d.MemberSetRole(ctx, &MemberSetRoleParams{WorkspaceID: workspaceID, UserID: userID, Role: role, Now: now()})
	if errors.Is(err, ErrConflict) {
		return Member{}, r.c.errorf("set role of member %s to %s: %w", userID, role, lastOwner(userID, workspaceID))
	}
	if err != nil {
		return Member{}, r.c.errorf("set role of member %s of workspace %s: %w", userID, workspaceID, err)
	}
	return m, nil
}

func (r members) Remove(ctx context.Context, workspaceID, userID string) error {
	err := r.c.d.MemberDelete(ctx, workspaceID, userID)
	if errors.Is(err, ErrConflict) {
		return r.c.errorf("remove member %s: %w", userID, lastOwner(userID, workspaceID))
	}
	if err != nil {
		return r.c.errorf("remove member %s of workspace %s: %w", userID, workspaceID, err)
	}
	return nil
}

// sessions is Sessions on a Driver.
type sessions struct{ c Core }

// cut shortens s to at most n bytes without splitting a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func (r sessions) Create(ctx context.Context, s Session) (Session, error) {
	if err := s.Validate(); err != nil {
		return Session{}, r.c.errorf("create session: %w", err)
	}
	s.ID = slices.Clone(s.ID)
	t := now()
	s.CreatedAt, s.LastSeenAt = t, t
	s.IdleExpiresAt, s.ExpiresAt = Timestamp(s.IdleExpiresAt), Timestamp(s.ExpiresAt)
	s.UserAgent, s.RemoteAddr = cut(s.UserAgent, MaxSessionUserAgent), cut(s.RemoteAddr, MaxSessionRemoteAddr)
	if err := r.c.d.SessionInsert(ctx, &SessionInsertParams{Session: s}); err != nil {
		return Session{}, r.c.errorf("create session of user %s: %w", s.UserID, r.c.missingParent(ctx, err, "", s.UserID))
	}
	return s, nil
}

func (r sessions) GetByHash(ctx context.Context, hash []byte) (Session, error) {
	s, err := r.c.d.SessionGet(ctx, &SessionGetParams{Hash: hash, Now: now()})
	if err != nil {
		// Never the hash in the message: it names a live session.
		return Session{}, r.c.errorf("get session: %w", err)
	}
	return s, nil
}

func (r sessions) ListByUser(ctx context.Context, userID string) ([]Session, error) {
	out, err := r.c.d.SessionListByUser(ctx, &SessionListByUserParams{UserID: userID, Now: now()})
	if err != nil {
		return nil, r.c.errorf("list sessions of user %s: %w", userID, err)
	}
	return out, nil
}

func (r sessions) Touch(ctx context.Context, hash []byte, at, idleExpiresAt time.Time) error {
	if err := r.c.d.SessionTouch(ctx, &SessionTouchParams{Hash: hash, At: Timestamp(at), IdleExpiresAt: Timestamp(idleExpiresAt)}); err != nil {
		return r.c.errorf("touch session: %w", err)
	}
	return nil
}

func (r sessions) Delete(ctx context.Context, hash []byte) error {
	if err := r.c.d.SessionDelete(ctx, hash); err != nil {
		return r.c.errorf("delete session: %w", err)
	}
	return nil
}

func (r sessions) DeleteByUser(ctx context.Context, userID string) (int, error) {
	n, err := r.c.d.SessionDeleteByUser(ctx, userID)
	if err != nil {
		return 0, r.c.errorf("delete sessions of user %s: %w", userID, err)
	}
	return n, nil
}

func (r sessions) DeleteExpired(ctx context.Context, at time.Time) (int, error) {
	n, err := r.c.d.SessionDeleteExpired(ctx, &SessionDeleteExpiredParams{Now: Timestamp(at)})
	if err != nil {
		return 0, r.c.errorf("delete expired sessions: %w", err)
	}
	return n, nil
}

// invitations is Invitations on a Driver.
type invitations struct{ c Core }

func (r invitations) Create(ctx context.Context, inv Invitation) (Invitation, error) {
	if err := inv.Validate(); err != nil {
		return Invitation{}, r.c.errorf("create invitation: %w", err)
	}
	if inv.ID == "" {
		inv.ID = NewID()
	}
	inv.TokenHash = slices.Clone(inv.TokenHash)
	inv.Email = NormalizeEmail(inv.Email)
	inv.CreatedAt = now()
	inv.ExpiresAt = Timestamp(inv.ExpiresAt)
	inv.AcceptedAt, inv.AcceptedBy = nil, ""
	if err := r.c.d.InvitationInsert(ctx, &InvitationInsertParams{Invitation: inv}); err != nil {
		return Invitation{}, r.c.errorf("create invitation to workspace %s: %w", inv.WorkspaceID, r.c.missingParent(ctx, err, inv.WorkspaceID, ""))
	}
	return inv, nil
}

func (r invitations) GetByHash(ctx context.Context, hash []byte) (Invitation, error) {
	inv, err := r.c.d.InvitationGetByHash(ctx, hash)
	if err != nil {
		return Invitation{}, r.c.errorf("get invitation: %w", err)
	}
	return inv, nil
}

func (r invitations) List(ctx context.Context, workspaceID string) ([]Invitation, error) {
	out, err := r.c.d.InvitationList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list invitations of workspace %s: %w", workspaceID, err)
	}
	return out, nil
}

func (r invitations) Accept(ctx context.Context, hash []byte, userID string, at time.Time) (Invitation, error) {
	if userID == "" {
		return Invitation{}, r.c.errorf("accept invitation: %w: user id is empty; name the user who accepts", ErrInvalid)
	}
	at = Timestamp(at)
	inv, err := r.c.d.InvitationAccept(ctx, &InvitationAcceptParams{Hash: hash, UserID: userID, At: at})
	if err == nil {
		return inv, nil
	}
	if !isNotFound(err) {
		return Invitation{}, r.c.errorf("accept invitation: %w", r.c.missingParent(ctx, err, "", userID))
	}
	// Nothing matched: explain with the stored row.
	stored, gerr := r.c.d.InvitationGetByHash(ctx, hash)
	switch {
	case gerr != nil:
		return Invitation{}, r.c.errorf("accept invitation: %w", gerr)
	case stored.AcceptedAt != nil:
		return stored, r.c.errorf("accept invitation %s: %w: it was accepted already, at %s", stored.ID, ErrConflict, stored.AcceptedAt.Format(time.RFC3339))
	case !stored.ExpiresAt.After(at):
		return stored, r.c.errorf("accept invitation %s: %w: it expired at %s; ask for a new one", stored.ID, ErrConflict, stored.ExpiresAt.Format(time.RFC3339))
	}
	return Invitation{}, r.c.errorf("accept invitation %s: %w", stored.ID, r.c.missingParent(ctx, err, "", userID))
}

func (r invitations) Delete(ctx context.Context, workspaceID, id string) error {
	if err := r.c.d.InvitationDelete(ctx, workspaceID, id); err != nil {
		return r.c.errorf("delete invitation %s: %w", id, err)
	}
	return nil
}

// signInLinks is SignInLinks on a Driver.
type signInLinks struct{ c Core }

func (r signInLinks) Create(ctx context.Context, l SignInLink) (SignInLink, error) {
	if err := l.Validate(); err != nil {
		return SignInLink{}, r.c.errorf("create sign-in link: %w", err)
	}
	if l.ID == "" {
		l.ID = NewID()
	}
	l.TokenHash = slices.Clone(l.TokenHash)
	l.CreatedAt = now()
	l.ExpiresAt = Timestamp(l.ExpiresAt)
	l.UsedAt = nil
	if err := r.c.d.SignInLinkInsert(ctx, &SignInLinkInsertParams{Link: l}); err != nil {
		return SignInLink{}, r.c.errorf("create sign-in link for user %s: %w", l.UserID, r.c.missingParent(ctx, err, "", l.UserID))
	}
	return l, nil
}

func (r signInLinks) Use(ctx context.Context, hash []byte, at time.Time) (SignInLink, error) {
	at = Timestamp(at)
	l, err := r.c.d.SignInLinkUse(ctx, &SignInLinkUseParams{Hash: hash, At: at})
	if err == nil {
		return l, nil
	}
	if !isNotFound(err) {
		return SignInLink{}, r.c.errorf("use sign-in link: %w", err)
	}
	stored, gerr := r.c.d.SignInLinkGetByHash(ctx, hash)
	switch {
	case gerr != nil:
		return SignInLink{}, r.c.errorf("use sign-in link: %w", gerr)
	case stored.UsedAt != nil:
		return stored, r.c.errorf("use sign-in link %s: %w: it was used already, at %s", stored.ID, ErrConflict, stored.UsedAt.Format(time.RFC3339))
	case !stored.ExpiresAt.After(at):
		return stored, r.c.errorf("use sign-in link %s: %w: it expired at %s; ask for a new one", stored.ID, ErrConflict, stored.ExpiresAt.Format(time.RFC3339))
	}
	return SignInLink{}, r.c.errorf("use sign-in link %s: %w", stored.ID, err)
}
