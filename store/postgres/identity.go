package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const userColumns = `id, email, display_name, password_hash, created_at, updated_at, disabled_at,
	failed_logins, failed_since, lockouts, locked_until, last_login_at`

func scanUser(row pgx.Row) (store.User, error) {
	var u store.User
	if err := row.Scan(&u.ID, &u.Email, &u.DisplayName, &u.PasswordHash, &u.CreatedAt, &u.UpdatedAt, &u.DisabledAt,
		&u.FailedLogins, &u.FailedSince, &u.Lockouts, &u.LockedUntil, &u.LastLoginAt); err != nil {
		return store.User{}, err
	}
	u.CreatedAt, u.UpdatedAt = u.CreatedAt.UTC(), u.UpdatedAt.UTC()
	u.DisabledAt = utc(u.DisabledAt)
	u.FailedSince, u.LockedUntil, u.LastLoginAt = utc(u.FailedSince), utc(u.LockedUntil), utc(u.LastLoginAt)
	return u, nil
}

func (d driver) UserInsert(ctx context.Context, p *store.UserInsertParams) error {
	u := p.User
	_, err := d.s.pool.Exec(ctx,
		`INSERT INTO users (`+userColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		u.ID, u.Email, u.DisplayName, u.PasswordHash, u.CreatedAt, u.UpdatedAt, u.DisabledAt,
		u.FailedLogins, u.FailedSince, u.Lockouts, u.LockedUntil, u.LastLoginAt)
	return mapErr(err)
}

func (d driver) UserGet(ctx context.Context, id string) (store.User, error) {
	u, err := scanUser(d.s.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
	return u, mapErr(err)
}

func (d driver) UserGetByEmail(ctx context.Context, email string) (store.User, error) {
	u, err := scanUser(d.s.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE email = $1`, email))
	return u, mapErr(err)
}

func (d driver) UserList(ctx context.Context) ([]store.User, error) {
	return queryList(ctx, d.s, scanUser, `SELECT `+userColumns+` FROM users ORDER BY email COLLATE "C"`)
}

func (d driver) UserCount(ctx context.Context) (int, error) {
	var n int
	err := d.s.pool.QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, mapErr(err)
}

func (d driver) UserUpdate(ctx context.Context, p *store.UserUpdateParams) (store.User, error) {
	u, err := scanUser(d.s.pool.QueryRow(ctx,
		`UPDATE users SET email = COALESCE($1, email), display_name = COALESCE($2, display_name),
			password_hash = COALESCE($3, password_hash), updated_at = $4
		WHERE id = $5 RETURNING `+userColumns,
		p.Update.Email, p.Update.DisplayName, p.Update.PasswordHash, p.Now, p.ID))
	return u, mapErr(err)
}

func (d driver) UserSetDisabled(ctx context.Context, p *store.UserSetDisabledParams) (store.User, error) {
	u, err := scanUser(d.s.pool.QueryRow(ctx,
		`UPDATE users SET disabled_at = CASE WHEN $1::timestamptz IS NULL THEN NULL ELSE COALESCE(disabled_at, $1) END, updated_at = $2
		WHERE id = $3 RETURNING `+userColumns,
		p.At, p.Now, p.ID))
	return u, mapErr(err)
}

func (d driver) UserSwapLoginState(ctx context.Context, p *store.UserSwapLoginStateParams) error {
	n, o := p.Next, p.Prev
	tag, err := d.s.pool.Exec(ctx,
		`UPDATE users SET failed_logins = $1, failed_since = $2, lockouts = $3, locked_until = $4, last_login_at = $5
		WHERE id = $6 AND failed_logins = $7 AND failed_since IS NOT DISTINCT FROM $8 AND lockouts = $9
			AND locked_until IS NOT DISTINCT FROM $10 AND last_login_at IS NOT DISTINCT FROM $11`,
		n.FailedLogins, n.FailedSince, n.Lockouts, n.LockedUntil, n.LastLoginAt,
		p.ID, o.FailedLogins, o.FailedSince, o.Lockouts, o.LockedUntil, o.LastLoginAt)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

const userIdentityColumns = `provider, subject, user_id, created_at`

func scanUserIdentity(row pgx.Row) (store.UserIdentity, error) {
	var i store.UserIdentity
	if err := row.Scan(&i.Provider, &i.Subject, &i.UserID, &i.CreatedAt); err != nil {
		return store.UserIdentity{}, err
	}
	i.CreatedAt = i.CreatedAt.UTC()
	return i, nil
}

func (d driver) UserIdentityInsert(ctx context.Context, p *store.UserIdentityInsertParams) error {
	i := p.Identity
	_, err := d.s.pool.Exec(ctx, `INSERT INTO user_identities (`+userIdentityColumns+`) VALUES ($1, $2, $3, $4)`,
		i.Provider, i.Subject, i.UserID, i.CreatedAt)
	return mapErr(err)
}

func (d driver) UserIdentityGet(ctx context.Context, provider, subject string) (store.UserIdentity, error) {
	i, err := scanUserIdentity(d.s.pool.QueryRow(ctx,
		`SELECT `+userIdentityColumns+` FROM user_identities WHERE provider = $1 AND subject = $2`, provider, subject))
	return i, mapErr(err)
}

func (d driver) UserIdentityList(ctx context.Context, userID string) ([]store.UserIdentity, error) {
	return queryList(ctx, d.s, scanUserIdentity,
		`SELECT `+userIdentityColumns+` FROM user_identities WHERE user_id = $1 ORDER BY provider COLLATE "C", subject COLLATE "C"`, userID)
}

func (d driver) UserIdentityDelete(ctx context.Context, provider, subject string) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM user_identities WHERE provider = $1 AND subject = $2`, provider, subject)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

// memberSelect reads members with their user's address and name.
const memberSelect = `SELECT m.workspace_id, m.user_id, m.role, m.created_at, m.updated_at, u.email, u.display_name
	FROM members m JOIN users u ON u.id = m.user_id`

func scanMember(row pgx.Row) (store.Member, error) {
	var m store.Member
	if err := row.Scan(&m.WorkspaceID, &m.UserID, &m.Role, &m.CreatedAt, &m.UpdatedAt, &m.Email, &m.DisplayName); err != nil {
		return store.Member{}, err
	}
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	return m, nil
}

func (d driver) MemberInsert(ctx context.Context, p *store.MemberInsertParams) error {
	m := p.Member
	_, err := d.s.pool.Exec(ctx,
		`INSERT INTO members (workspace_id, user_id, role, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)`,
		m.WorkspaceID, m.UserID, string(m.Role), m.CreatedAt, m.UpdatedAt)
	return mapErr(err)
}

func (d driver) MemberGet(ctx context.Context, workspaceID, userID string) (store.Member, error) {
	m, err := scanMember(d.s.pool.QueryRow(ctx, memberSelect+` WHERE m.workspace_id = $1 AND m.user_id = $2`, workspaceID, userID))
	return m, mapErr(err)
}

func (d driver) MemberList(ctx context.Context, workspaceID string) ([]store.Member, error) {
	return queryList(ctx, d.s, scanMember,
		memberSelect+` WHERE m.workspace_id = $1 ORDER BY m.created_at, m.user_id COLLATE "C"`, workspaceID)
}

func scanMembership(row pgx.Row) (store.Membership, error) {
	var ms store.Membership
	if err := row.Scan(&ms.Workspace.ID, &ms.Workspace.Name, &ms.Workspace.CreatedAt, &ms.Role, &ms.Since); err != nil {
		return store.Membership{}, err
	}
	ms.Workspace.CreatedAt, ms.Since = ms.Workspace.CreatedAt.UTC(), ms.Since.UTC()
	return ms, nil
}

func (d driver) MemberListByUser(ctx context.Context, userID string) ([]store.Membership, error) {
	return queryList(ctx, d.s, scanMembership,
		`SELECT w.id, w.name, w.created_at, m.role, m.created_at
		FROM members m JOIN workspaces w ON w.id = m.workspace_id WHERE m.user_id = $1 ORDER BY w.name COLLATE "C"`, userID)
}

// memberWrite runs a member write that may take the owner role from the
// row in a transaction holding the workspace row's lock, so two
// concurrent demotions of the last two owners cannot both see another
// owner remaining. FOR NO KEY UPDATE leaves the foreign-key checks of
// other inserts into the workspace unblocked. write reports whether it
// matched a row; when it did not, the member's existence decides between
// ErrConflict (the owner rule refused) and ErrNotFound.
func (d driver) memberWrite(ctx context.Context, workspaceID, userID string, write func(tx pgx.Tx) (bool, error)) error {
	return pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE`, workspaceID).Scan(&one); err != nil {
			return err
		}
		ok, err := write(tx)
		if err != nil || ok {
			return err
		}
		err = tx.QueryRow(ctx, `SELECT 1 FROM members WHERE workspace_id = $1 AND user_id = $2`, workspaceID, userID).Scan(&one)
		if err != nil {
			return err
		}
		return store.ErrConflict
	})
}

// keepsOwner is the condition under which a member write may take the
// owner role from the row: it is no owner, or another owner remains.
const keepsOwner = `(role <> 'owner' OR (SELECT count(*) FROM members o WHERE o.workspace_id = members.workspace_id AND o.role = 'owner') > 1)`

func (d driver) MemberSetRole(ctx context.Context, p *store.MemberSetRoleParams) (store.Member, error) {
	err := d.memberWrite(ctx, p.WorkspaceID, p.UserID, func(tx pgx.Tx) (bool, error) {
		tag, err := tx.Exec(ctx,
			`UPDATE members SET role = $1, updated_at = $2 WHERE workspace_id = $3 AND user_id = $4 AND ($1 = 'owner' OR `+keepsOwner+`)`,
			string(p.Role), p.Now, p.WorkspaceID, p.UserID)
		return tag.RowsAffected() > 0, err
	})
	if err != nil {
		return store.Member{}, mapErr(err)
	}
	return d.MemberGet(ctx, p.WorkspaceID, p.UserID)
}

func (d driver) MemberDelete(ctx context.Context, workspaceID, userID string) error {
	err := d.memberWrite(ctx, workspaceID, userID, func(tx pgx.Tx) (bool, error) {
		tag, err := tx.Exec(ctx, `DELETE FROM members WHERE workspace_id = $1 AND user_id = $2 AND `+keepsOwner, workspaceID, userID)
		return tag.RowsAffected() > 0, err
	})
	return mapErr(err)
}

const sessionColumns = `id, user_id, csrf_token, created_at, last_seen_at, idle_expires_at, expires_at, user_agent, remote_addr`

func scanSession(row pgx.Row) (store.Session, error) {
	var s store.Session
	if err := row.Scan(&s.ID, &s.UserID, &s.CSRFToken, &s.CreatedAt, &s.LastSeenAt, &s.IdleExpiresAt, &s.ExpiresAt,
		&s.UserAgent, &s.RemoteAddr); err != nil {
		return store.Session{}, err
	}
	s.CreatedAt, s.LastSeenAt = s.CreatedAt.UTC(), s.LastSeenAt.UTC()
	s.IdleExpiresAt, s.ExpiresAt = s.IdleExpiresAt.UTC(), s.ExpiresAt.UTC()
	return s, nil
}

func (d driver) SessionInsert(ctx context.Context, p *store.SessionInsertParams) error {
	s := p.Session
	_, err := d.s.pool.Exec(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		s.ID, s.UserID, s.CSRFToken, s.CreatedAt, s.LastSeenAt, s.IdleExpiresAt, s.ExpiresAt, s.UserAgent, s.RemoteAddr)
	return mapErr(err)
}

// SessionGet: idle_expires_at is never after expires_at, so it alone
// decides.
func (d driver) SessionGet(ctx context.Context, p *store.SessionGetParams) (store.Session, error) {
	s, err := scanSession(d.s.pool.QueryRow(ctx,
		`SELECT `+sessionColumns+` FROM sessions WHERE id = $1 AND idle_expires_at > $2`, p.Hash, p.Now))
	return s, mapErr(err)
}

func (d driver) SessionListByUser(ctx context.Context, p *store.SessionListByUserParams) ([]store.Session, error) {
	return queryList(ctx, d.s, scanSession,
		`SELECT `+sessionColumns+` FROM sessions WHERE user_id = $1 AND idle_expires_at > $2 ORDER BY created_at DESC, id DESC`,
		p.UserID, p.Now)
}

func (d driver) SessionTouch(ctx context.Context, p *store.SessionTouchParams) error {
	tag, err := d.s.pool.Exec(ctx,
		`UPDATE sessions SET last_seen_at = GREATEST(last_seen_at, $1), idle_expires_at = LEAST(expires_at, GREATEST(idle_expires_at, $2))
		WHERE id = $3`,
		p.At, p.IdleExpiresAt, p.Hash)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func (d driver) SessionDelete(ctx context.Context, hash []byte) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, hash)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func (d driver) SessionDeleteByUser(ctx context.Context, userID string) (int, error) {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1`, userID)
	return int(tag.RowsAffected()), mapErr(err)
}

func (d driver) SessionDeleteExpired(ctx context.Context, p *store.SessionDeleteExpiredParams) (int, error) {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM sessions WHERE idle_expires_at <= $1`, p.Now)
	return int(tag.RowsAffected()), mapErr(err)
}

const invitationColumns = `id, token_hash, workspace_id, role, email, created_by, created_at, expires_at, accepted_at, accepted_by`

func scanInvitation(row pgx.Row) (store.Invitation, error) {
	var inv store.Invitation
	if err := row.Scan(&inv.ID, &inv.TokenHash, &inv.WorkspaceID, &inv.Role, &inv.Email, &inv.CreatedBy,
		&inv.CreatedAt, &inv.ExpiresAt, &inv.AcceptedAt, &inv.AcceptedBy); err != nil {
		return store.Invitation{}, err
	}
	inv.CreatedAt, inv.ExpiresAt, inv.AcceptedAt = inv.CreatedAt.UTC(), inv.ExpiresAt.UTC(), utc(inv.AcceptedAt)
	return inv, nil
}

func (d driver) InvitationInsert(ctx context.Context, p *store.InvitationInsertParams) error {
	inv := p.Invitation
	_, err := d.s.pool.Exec(ctx, `INSERT INTO invitations (`+invitationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, '')`,
		inv.ID, inv.TokenHash, inv.WorkspaceID, string(inv.Role), inv.Email, inv.CreatedBy, inv.CreatedAt, inv.ExpiresAt)
	return mapErr(err)
}

func (d driver) InvitationGetByHash(ctx context.Context, hash []byte) (store.Invitation, error) {
	inv, err := scanInvitation(d.s.pool.QueryRow(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE token_hash = $1`, hash))
	return inv, mapErr(err)
}

func (d driver) InvitationList(ctx context.Context, workspaceID string) ([]store.Invitation, error) {
	return queryList(ctx, d.s, scanInvitation,
		`SELECT `+invitationColumns+` FROM invitations WHERE workspace_id = $1 ORDER BY created_at DESC, id COLLATE "C" DESC`, workspaceID)
}

func (d driver) InvitationAccept(ctx context.Context, p *store.InvitationAcceptParams) (store.Invitation, error) {
	var inv store.Invitation
	err := pgx.BeginFunc(ctx, d.s.pool, func(tx pgx.Tx) error {
		var err error
		inv, err = scanInvitation(tx.QueryRow(ctx,
			`UPDATE invitations SET accepted_at = $1, accepted_by = $2
			WHERE token_hash = $3 AND accepted_at IS NULL AND expires_at > $1 RETURNING `+invitationColumns,
			p.At, p.UserID, p.Hash))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx,
			`INSERT INTO members (workspace_id, user_id, role, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
			ON CONFLICT (workspace_id, user_id) DO NOTHING`,
			inv.WorkspaceID, p.UserID, string(inv.Role), p.At)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Invitation{}, store.ErrNotFound
	}
	return inv, mapErr(err)
}

func (d driver) InvitationDelete(ctx context.Context, workspaceID, id string) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM invitations WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

const signInLinkColumns = `id, token_hash, user_id, created_at, expires_at, used_at`

func scanSignInLink(row pgx.Row) (store.SignInLink, error) {
	var l store.SignInLink
	if err := row.Scan(&l.ID, &l.TokenHash, &l.UserID, &l.CreatedAt, &l.ExpiresAt, &l.UsedAt); err != nil {
		return store.SignInLink{}, err
	}
	l.CreatedAt, l.ExpiresAt, l.UsedAt = l.CreatedAt.UTC(), l.ExpiresAt.UTC(), utc(l.UsedAt)
	return l, nil
}

func (d driver) SignInLinkInsert(ctx context.Context, p *store.SignInLinkInsertParams) error {
	l := p.Link
	_, err := d.s.pool.Exec(ctx, `INSERT INTO sign_in_links (`+signInLinkColumns+`) VALUES ($1, $2, $3, $4, $5, NULL)`,
		l.ID, l.TokenHash, l.UserID, l.CreatedAt, l.ExpiresAt)
	return mapErr(err)
}

func (d driver) SignInLinkGetByHash(ctx context.Context, hash []byte) (store.SignInLink, error) {
	l, err := scanSignInLink(d.s.pool.QueryRow(ctx, `SELECT `+signInLinkColumns+` FROM sign_in_links WHERE token_hash = $1`, hash))
	return l, mapErr(err)
}

func (d driver) SignInLinkUse(ctx context.Context, p *store.SignInLinkUseParams) (store.SignInLink, error) {
	l, err := scanSignInLink(d.s.pool.QueryRow(ctx,
		`UPDATE sign_in_links SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1 RETURNING `+signInLinkColumns,
		p.At, p.Hash))
	return l, mapErr(err)
}
