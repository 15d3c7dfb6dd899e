package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/store"
)

// Actor is who asks the service to change a workspace, with the Grant they
// hold in it; the caller resolves it (GrantOf, KeyActor, CLI).
type Actor struct {
	// ID names the actor in the audit log: "user:<id>", "apikey:<id>",
	// "cli".
	ID string
	// UserID is the signed-in user, or the user an API key acts for;
	// empty for the command line.
	UserID string
	Grant
}

// CLI is the command line on the server's machine: whoever runs it can
// read the database anyway, so it acts as an owner everywhere.
var CLI = Actor{ID: audit.ActorCLI, Grant: Grant{Role: RoleOwner}}

// UserActor is a signed-in user holding role in the workspace at hand.
func UserActor(userID string, role Role) Actor {
	return Actor{ID: UserActorID(userID), UserID: userID, Grant: Grant{Role: role}}
}

// KeyActor is an API key, with its role and scope.
func KeyActor(k store.APIKey) Actor {
	return Actor{ID: audit.APIKeyActor(k.ID), UserID: k.UserID, Grant: Grant{Role: k.Role, Scope: k.Scope}}
}

// GrantOf returns the user's grant in the workspace; ErrNotMember (which
// callers show as "not found", so foreign workspaces stay invisible) when
// they have none.
func (s *Service) GrantOf(ctx context.Context, workspaceID, userID string) (Grant, error) {
	m, err := s.st.Members().Get(ctx, workspaceID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return Grant{}, ErrNotMember
	}
	if err != nil {
		return Grant{}, fmt.Errorf("identity: role of user %s: %w", userID, err)
	}
	return Grant{Role: m.Role}, nil
}

// ActorOf is GrantOf as an Actor.
func (s *Service) ActorOf(ctx context.Context, workspaceID, userID string) (Actor, error) {
	g, err := s.GrantOf(ctx, workspaceID, userID)
	if err != nil {
		return Actor{}, err
	}
	return UserActor(userID, g.Role), nil
}

// NewUser is an account to create. Password may be empty: the user then
// signs in through OpenID Connect or a sign-in link until one is set.
type NewUser struct {
	Email, DisplayName, Password string
}

// CreateUser creates an account. A password shorter than
// MinPasswordLength is refused (ErrPasswordTooShort); an address taken is
// store.ErrConflict.
func (s *Service) CreateUser(ctx context.Context, nu NewUser) (store.User, error) {
	u := store.User{Email: nu.Email, DisplayName: strings.TrimSpace(nu.DisplayName)}
	if nu.Password != "" {
		if err := CheckPassword(nu.Password); err != nil {
			return store.User{}, err
		}
		h, err := s.hash(ctx, nu.Password)
		if err != nil {
			return store.User{}, err
		}
		u.PasswordHash = h
	}
	u, err := s.st.Users().Create(ctx, u)
	if err != nil {
		return store.User{}, fmt.Errorf("identity: create user: %w", err)
	}
	s.recordAccount(ctx, "system", u.ID, "user.create", nil)
	return u, nil
}

// SetPassword replaces the user's password (after a sign-in link, or a
// change). It refuses a short password; sessions stay signed in (see
// LogoutEverywhere).
func (s *Service) SetPassword(ctx context.Context, userID, password string) error {
	if err := CheckPassword(password); err != nil {
		return err
	}
	h, err := s.hash(ctx, password)
	if err != nil {
		return err
	}
	if _, err := s.st.Users().Update(ctx, userID, store.UserUpdate{PasswordHash: &h}); err != nil {
		return fmt.Errorf("identity: set password: %w", err)
	}
	s.recordAccount(ctx, UserActorID(userID), userID, "user.password_set", nil)
	return nil
}

// User returns a user.
func (s *Service) User(ctx context.Context, id string) (store.User, error) {
	return s.st.Users().Get(ctx, id)
}

// UserByEmail returns the user with the address.
func (s *Service) UserByEmail(ctx context.Context, email string) (store.User, error) {
	return s.st.Users().GetByEmail(ctx, email)
}

// Users lists every user by address.
func (s *Service) Users(ctx context.Context) ([]store.User, error) { return s.st.Users().List(ctx) }

// SetDisabled disables a user (and ends their sessions at once) or
// enables them again.
func (s *Service) SetDisabled(ctx context.Context, a Actor, userID string, disabled bool) (store.User, error) {
	u, err := s.st.Users().SetDisabled(ctx, userID, disabled)
	if err != nil {
		return store.User{}, fmt.Errorf("identity: disable user: %w", err)
	}
	action := "user.enable"
	if disabled {
		action = "user.disable"
		if _, err := s.st.Sessions().DeleteByUser(ctx, userID); err != nil {
			return u, fmt.Errorf("identity: disable user: sign out: %w", err)
		}
	}
	s.recordAccount(ctx, a.ID, userID, action, nil)
	return u, nil
}

// Memberships returns the user's workspaces with their role in each (the
// body of GET /api/me).
func (s *Service) Memberships(ctx context.Context, userID string) ([]store.Membership, error) {
	return s.st.Members().ListByUser(ctx, userID)
}

// Members lists a workspace's members; the actor needs PermRead.
func (s *Service) Members(ctx context.Context, a Actor, workspaceID string) ([]store.Member, error) {
	if err := a.Check(PermRead); err != nil {
		return nil, err
	}
	return s.st.Members().List(ctx, workspaceID)
}

// AddMember makes a user a member with role. The actor needs
// PermManageMembers, and PermManageOwners to add an owner; nobody grants
// a role above their own.
func (s *Service) AddMember(ctx context.Context, a Actor, workspaceID, userID string, role Role) (store.Member, error) {
	if err := canAssign(a.Grant, role); err != nil {
		return store.Member{}, err
	}
	m, err := s.st.Members().Add(ctx, store.Member{WorkspaceID: workspaceID, UserID: userID, Role: role})
	if err != nil {
		return store.Member{}, fmt.Errorf("identity: add member: %w", err)
	}
	s.record(ctx, a.ID, workspaceID, "member.add", "user:"+userID, map[string]any{"role": string(role)})
	return m, nil
}

// SetRole changes a member's role, under AddMember's rules for both the
// old role and the new one (an admin cannot demote an owner). The last
// owner keeps the role (store.ErrConflict).
func (s *Service) SetRole(ctx context.Context, a Actor, workspaceID, userID string, role Role) (store.Member, error) {
	if err := canAssign(a.Grant, role); err != nil {
		return store.Member{}, err
	}
	cur, err := s.st.Members().Get(ctx, workspaceID, userID)
	if err != nil {
		return store.Member{}, fmt.Errorf("identity: set role: %w", err)
	}
	if err := canAssign(a.Grant, cur.Role); err != nil {
		return store.Member{}, err
	}
	m, err := s.st.Members().SetRole(ctx, workspaceID, userID, role)
	if err != nil {
		return store.Member{}, fmt.Errorf("identity: set role: %w", err)
	}
	s.record(ctx, a.ID, workspaceID, "member.role", "user:"+userID, map[string]any{"from": string(cur.Role), "to": string(role)})
	return m, nil
}

// RemoveMember takes a user out of the workspace. Members may leave on
// their own; removing someone else needs the right to assign their role.
// The last owner stays (store.ErrConflict).
func (s *Service) RemoveMember(ctx context.Context, a Actor, workspaceID, userID string) error {
	cur, err := s.st.Members().Get(ctx, workspaceID, userID)
	if err != nil {
		return fmt.Errorf("identity: remove member: %w", err)
	}
	if a.UserID != userID {
		if err := canAssign(a.Grant, cur.Role); err != nil {
			return err
		}
	}
	if err := s.st.Members().Remove(ctx, workspaceID, userID); err != nil {
		return fmt.Errorf("identity: remove member: %w", err)
	}
	s.record(ctx, a.ID, workspaceID, "member.remove", "user:"+userID, map[string]any{"role": string(cur.Role)})
	return nil
}

// Link is a one-time link: Path is relative to the server's address
// (SignInLinkPath or InvitationPath followed by Token).
type Link struct {
	Token     string
	Path      string
	ExpiresAt time.Time
}

// Invitation is a new invitation with its link.
type Invitation struct {
	Link
	Invitation store.Invitation
}

// Invite makes an invitation to the workspace with role, for anyone
// holding the link or, with email, for that address only. The actor needs
// the right to assign role (AddMember's rules).
func (s *Service) Invite(ctx context.Context, a Actor, workspaceID string, role Role, email string) (Invitation, error) {
	if err := canAssign(a.Grant, role); err != nil {
		return Invitation{}, err
	}
	return s.invite(ctx, a.ID, workspaceID, role, email, s.o.InvitationTTL)
}

func (s *Service) invite(ctx context.Context, actor, workspaceID string, role Role, email string, ttl time.Duration) (Invitation, error) {
	token := randomToken()
	inv, err := s.st.Invitations().Create(ctx, store.Invitation{TokenHash: HashToken(token), WorkspaceID: workspaceID, Role: role,
		Email: email, CreatedBy: actor, ExpiresAt: s.now().Add(ttl)})
	if err != nil {
		return Invitation{}, fmt.Errorf("identity: invite: %w", err)
	}
	d := map[string]any{"role": string(role)}
	if email != "" {
		d["email_sha256"] = emailDigest(email)
	}
	s.record(ctx, actor, workspaceID, "invitation.create", "invitation:"+inv.ID, d)
	return Invitation{Link: Link{Token: token, Path: InvitationPath + token, ExpiresAt: inv.ExpiresAt}, Invitation: inv}, nil
}

// Invitations lists a workspace's invitations; the actor needs
// PermManageMembers.
func (s *Service) Invitations(ctx context.Context, a Actor, workspaceID string) ([]store.Invitation, error) {
	if err := a.Check(PermManageMembers); err != nil {
		return nil, err
	}
	return s.st.Invitations().List(ctx, workspaceID)
}

// RevokeInvitation deletes an invitation; the actor needs
// PermManageMembers.
func (s *Service) RevokeInvitation(ctx context.Context, a Actor, workspaceID, id string) error {
	if err := a.Check(PermManageMembers); err != nil {
		return err
	}
	if err := s.st.Invitations().Delete(ctx, workspaceID, id); err != nil {
		return fmt.Errorf("identity: revoke invitation: %w", err)
	}
	s.record(ctx, a.ID, workspaceID, "invitation.revoke", "invitation:"+id, nil)
	return nil
}

// checkInvitation finds the invitation of token and refuses one that
// cannot be accepted now by someone with email.
func (s *Service) checkInvitation(ctx context.Context, token, email string) (store.Invitation, error) {
	inv, err := s.st.Invitations().GetByHash(ctx, HashToken(token))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return inv, ErrUnknownLink
	case err != nil:
		return inv, fmt.Errorf("identity: invitation: %w", err)
	case inv.AcceptedAt != nil:
		return inv, ErrLinkUsed
	case !inv.ExpiresAt.After(s.now()):
		return inv, ErrLinkExpired
	case inv.Email != "" && inv.Email != store.NormalizeEmail(email):
		return inv, ErrWrongInvitee
	}
	return inv, nil
}

// InvitationInfo returns what the invitation of token offers (the page of
// the link shows the workspace and role before anyone accepts); the
// refusals of AcceptInvitation apply but the address.
func (s *Service) InvitationInfo(ctx context.Context, token string) (store.Invitation, store.Workspace, error) {
	inv, err := s.checkInvitation(ctx, token, "")
	if errors.Is(err, ErrWrongInvitee) {
		err = nil
	}
	if err != nil {
		return store.Invitation{}, store.Workspace{}, err
	}
	ws, err := s.st.Workspaces().Get(ctx, inv.WorkspaceID)
	return inv, ws, err
}

// AcceptInvitation makes the signed-in user a member as the invitation
// says; someone who is a member already gets the invitation's role when it
// is higher. Each invitation works once (ErrLinkUsed), until it expires
// (ErrLinkExpired).
func (s *Service) AcceptInvitation(ctx context.Context, token, userID string) (store.Member, error) {
	u, err := s.st.Users().Get(ctx, userID)
	if err != nil {
		return store.Member{}, fmt.Errorf("identity: accept invitation: %w", err)
	}
	if _, err := s.checkInvitation(ctx, token, u.Email); err != nil {
		return store.Member{}, err
	}
	inv, err := s.st.Invitations().Accept(ctx, HashToken(token), userID, s.now())
	if errors.Is(err, store.ErrConflict) {
		if inv.AcceptedAt != nil {
			return store.Member{}, ErrLinkUsed
		}
		return store.Member{}, ErrLinkExpired
	}
	if err != nil {
		return store.Member{}, fmt.Errorf("identity: accept invitation: %w", err)
	}
	m, err := s.st.Members().Get(ctx, inv.WorkspaceID, userID)
	if err == nil && m.Role.Rank() < inv.Role.Rank() {
		m, err = s.st.Members().SetRole(ctx, inv.WorkspaceID, userID, inv.Role)
	}
	if err != nil {
		return store.Member{}, fmt.Errorf("identity: accept invitation: %w", err)
	}
	s.record(ctx, UserActorID(userID), inv.WorkspaceID, "invitation.accept", "invitation:"+inv.ID, map[string]any{"role": string(m.Role)})
	return m, nil
}

// SignUp creates an account through an invitation, accepts it and signs
// the new user in: the page of an invitation link for someone without an
// account, and of the setup link of a fresh install. The invitation is
// checked first, so a used or expired link creates nobody.
func (s *Service) SignUp(ctx context.Context, token string, nu NewUser, from Client) (SignIn, error) {
	if _, err := s.checkInvitation(ctx, token, nu.Email); err != nil {
		return SignIn{}, err
	}
	if err := CheckPassword(nu.Password); err != nil {
		return SignIn{}, err
	}
	u, err := s.CreateUser(ctx, nu)
	if err != nil {
		return SignIn{}, err
	}
	if _, err := s.AcceptInvitation(ctx, token, u.ID); err != nil {
		return SignIn{}, err
	}
	return s.startSession(ctx, u, from, "invitation")
}

// CreateSignInLink makes a one-time sign-in link for the user, valid for
// SignInLinkTTL. Only installation administrators (the command line)
// should hand them out: the link is as good as the password.
func (s *Service) CreateSignInLink(ctx context.Context, a Actor, userID string) (Link, error) {
	token := randomToken()
	l, err := s.st.SignInLinks().Create(ctx, store.SignInLink{TokenHash: HashToken(token), UserID: userID, ExpiresAt: s.now().Add(s.o.SignInLinkTTL)})
	if err != nil {
		return Link{}, fmt.Errorf("identity: create sign-in link: %w", err)
	}
	s.recordAccount(ctx, a.ID, userID, "auth.link_create", nil)
	return Link{Token: token, Path: SignInLinkPath + token, ExpiresAt: l.ExpiresAt}, nil
}

// UseSignInLink signs the link's user in, once (ErrLinkUsed), before it
// expires (ErrLinkExpired).
func (s *Service) UseSignInLink(ctx context.Context, token string, from Client) (SignIn, error) {
	l, err := s.st.SignInLinks().Use(ctx, HashToken(token), s.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return SignIn{}, ErrUnknownLink
	case errors.Is(err, store.ErrConflict) && l.UsedAt != nil:
		return SignIn{}, ErrLinkUsed
	case errors.Is(err, store.ErrConflict):
		return SignIn{}, ErrLinkExpired
	case err != nil:
		return SignIn{}, fmt.Errorf("identity: sign-in link: %w", err)
	}
	u, err := s.st.Users().Get(ctx, l.UserID)
	if err != nil {
		return SignIn{}, fmt.Errorf("identity: sign-in link: %w", err)
	}
	return s.startSession(ctx, u, from, "link")
}

// SetupLink makes the setup link of a fresh install: when the database
// has no users, an invitation to be the owner of workspace (created when
// missing), valid for SetupLinkTTL, whose page creates the first account
// (SignUp). With users it makes nothing and returns false. serve logs the
// link at start.
func (s *Service) SetupLink(ctx context.Context, workspace string) (Link, bool, error) {
	n, err := s.st.Users().Count(ctx)
	if err != nil || n > 0 {
		return Link{}, false, err
	}
	ws, err := s.st.Workspaces().GetOrCreate(ctx, workspace)
	if err != nil {
		return Link{}, false, fmt.Errorf("identity: setup link: %w", err)
	}
	inv, err := s.invite(ctx, "system", ws.ID, RoleOwner, "", s.o.SetupLinkTTL)
	if err != nil {
		return Link{}, false, err
	}
	return inv.Link, true, nil
}

// CreateWorkspace creates a workspace; a user who creates it becomes its
// owner. Any signed-in user may create one.
func (s *Service) CreateWorkspace(ctx context.Context, a Actor, name string) (store.Workspace, error) {
	ws, err := s.st.Workspaces().Create(ctx, store.Workspace{Name: name})
	if err != nil {
		return store.Workspace{}, fmt.Errorf("identity: create workspace: %w", err)
	}
	if a.UserID != "" {
		if _, err := s.st.Members().Add(ctx, store.Member{WorkspaceID: ws.ID, UserID: a.UserID, Role: RoleOwner}); err != nil {
			return ws, fmt.Errorf("identity: create workspace: make its creator owner: %w", err)
		}
	}
	s.record(ctx, a.ID, ws.ID, "workspace.create", "workspace:"+ws.ID, nil)
	return ws, nil
}

// RenameWorkspace renames a workspace; the actor needs PermAdminWorkspace.
func (s *Service) RenameWorkspace(ctx context.Context, a Actor, workspaceID, name string) (store.Workspace, error) {
	if err := a.Check(PermAdminWorkspace); err != nil {
		return store.Workspace{}, err
	}
	ws, err := s.st.Workspaces().Rename(ctx, workspaceID, name)
	if err != nil {
		return store.Workspace{}, fmt.Errorf("identity: rename workspace: %w", err)
	}
	s.record(ctx, a.ID, workspaceID, "workspace.rename", "workspace:"+workspaceID, nil)
	return ws, nil
}

// DeleteWorkspace deletes a workspace with everything in it but its audit
// log; the actor needs PermDeleteWorkspace (owners).
func (s *Service) DeleteWorkspace(ctx context.Context, a Actor, workspaceID string) error {
	if err := a.Check(PermDeleteWorkspace); err != nil {
		return err
	}
	if _, err := s.st.Workspaces().Get(ctx, workspaceID); err != nil {
		return fmt.Errorf("identity: delete workspace: %w", err)
	}
	// Written first and at once, not queued for the audit sink's
	// background writer: the audit log takes events only for a workspace
	// that exists, and its rows outlive it. No record, no delete.
	ev := store.AuditEvent{WorkspaceID: workspaceID, Actor: a.ID, Action: "workspace.delete", Target: "workspace:" + workspaceID, CreatedAt: s.now()}
	audit.Fill(ctx, &ev)
	if err := s.st.AuditLog().Append(ctx, ev); err != nil {
		return fmt.Errorf("identity: delete workspace: audit it first: %w", err)
	}
	if f := s.o.BeforeWorkspaceDelete; f != nil {
		if err := f(ctx, workspaceID); err != nil {
			return fmt.Errorf("identity: delete workspace: %w", err)
		}
	}
	if err := s.st.Workspaces().Delete(ctx, workspaceID); err != nil {
		return fmt.Errorf("identity: delete workspace: %w", err)
	}
	return nil
}

// APIKeyPrefix starts every API key, so a leaked key is recognisable by
// secret scanners.
const APIKeyPrefix = "ac_"

// NewAPIKeyToken returns a fresh API key: APIKeyPrefix and 32 random
// bytes, base64url.
func NewAPIKeyToken() string { return APIKeyPrefix + randomToken() }

// NewAPIKey is a key to create. An empty Role is RoleMember.
type NewAPIKey struct {
	Name  string
	Role  Role
	Scope string
}

// CreateAPIKey makes an API key of the workspace acting for the actor's
// user, and returns the key (shown once; the store keeps its hash). The
// actor needs PermManageKeys and a role at least the key's.
func (s *Service) CreateAPIKey(ctx context.Context, a Actor, workspaceID string, nk NewAPIKey) (string, store.APIKey, error) {
	if nk.Role == "" {
		nk.Role = RoleMember
	}
	if err := a.Check(PermManageKeys); err != nil {
		return "", store.APIKey{}, err
	}
	if nk.Role.Rank() > a.Role.Rank() {
		return "", store.APIKey{}, fmt.Errorf("%w: you are %s and cannot make a key with the higher role %s", ErrForbidden, a.Role, nk.Role)
	}
	token := NewAPIKeyToken()
	k, err := s.st.APIKeys().Create(ctx, store.APIKey{WorkspaceID: workspaceID, Name: nk.Name, Prefix: token[:len(APIKeyPrefix)+6],
		Hash: HashToken(token), Role: nk.Role, Scope: nk.Scope, UserID: a.UserID})
	if err != nil {
		return "", store.APIKey{}, fmt.Errorf("identity: create api key: %w", err)
	}
	s.record(ctx, a.ID, workspaceID, "apikey.create", "apikey:"+k.ID, map[string]any{"name": nk.Name, "role": string(k.Role), "scope": k.Scope})
	return token, k, nil
}

// APIKeys lists the workspace's keys, revoked ones included; the actor
// needs PermManageKeys.
func (s *Service) APIKeys(ctx context.Context, a Actor, workspaceID string) ([]store.APIKey, error) {
	if err := a.Check(PermManageKeys); err != nil {
		return nil, err
	}
	return s.st.APIKeys().List(ctx, workspaceID)
}

// RevokeAPIKey revokes a key of the workspace; the actor needs
// PermManageKeys and a role at least the key's, so nobody ends a more
// powerful credential than their own.
func (s *Service) RevokeAPIKey(ctx context.Context, a Actor, workspaceID, id string) error {
	if err := a.Check(PermManageKeys); err != nil {
		return err
	}
	k, err := s.st.APIKeys().Get(ctx, workspaceID, id)
	if err != nil {
		return fmt.Errorf("identity: revoke api key: %w", err)
	}
	if k.Role.Rank() > a.Role.Rank() {
		return fmt.Errorf("%w: you are %s and cannot revoke a key with the higher role %s", ErrForbidden, a.Role, k.Role)
	}
	if err := s.st.APIKeys().Revoke(ctx, workspaceID, id); err != nil {
		return fmt.Errorf("identity: revoke api key: %w", err)
	}
	s.record(ctx, a.ID, workspaceID, "apikey.revoke", "apikey:"+id, nil)
	return nil
}

// AbsoluteTimeout is how long a session lasts at most (the cookie's
// lifetime).
func (s *Service) AbsoluteTimeout() time.Duration { return s.o.AbsoluteTimeout }
