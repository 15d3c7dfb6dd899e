package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

const userColumns = `id, email, display_name, password_hash, created_at, updated_at, disabled_at,
	failed_logins, failed_since, lockouts, locked_until, last_login_at`

func scanUser(sc scanner) (store.User, error) {
	var (
		u                                  store.User
		created, updated                   int64
		disabled, since, locked, lastLogin sql.NullInt64
	)
	if err := sc.Scan(&u.ID, &u.Email, &u.DisplayName, &u.PasswordHash, &created, &updated, &disabled,
		&u.FailedLogins, &since, &u.Lockouts, &locked, &lastLogin); err != nil {
		return store.User{}, err
	}
	u.CreatedAt, u.UpdatedAt = fromMicros(created), fromMicros(updated)
	u.DisabledAt = fromNullMicros(disabled)
	u.FailedSince, u.LockedUntil, u.LastLoginAt = fromNullMicros(since), fromNullMicros(locked), fromNullMicros(lastLogin)
	return u, nil
}

// nullMicros stores a nil time as NULL.
func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return micros(*t)
}

func (d driver) UserInsert(ctx context.Context, p *store.UserInsertParams) error {
	u := p.User
	_, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO users (`+userColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.Email, u.DisplayName, u.PasswordHash, micros(u.CreatedAt), micros(u.UpdatedAt), nullMicros(u.DisabledAt),
		u.FailedLogins, nullMicros(u.FailedSince), u.Lockouts, nullMicros(u.LockedUntil), nullMicros(u.LastLoginAt))
	return mapErr(err)
}

func (d driver) UserGet(ctx context.Context, id string) (store.User, error) {
	u, err := scanUser(d.s.reader.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
	return u, mapErr(err)
}

func (d driver) UserGetByEmail(ctx context.Context, email string) (store.User, error) {
	u, err := scanUser(d.s.reader.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE email = ?`, email))
	return u, mapErr(err)
}

func (d driver) UserList(ctx context.Context) ([]store.User, error) {
	return queryList(ctx, d.s.reader, scanUser, `SELECT `+userColumns+` FROM users ORDER BY email`)
}

func (d driver) UserCount(ctx context.Context) (int, error) {
	var n int
	err := d.s.reader.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, mapErr(err)
}

// strPtr stores a nil string as NULL, which COALESCE then skips.
func strPtr(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func (d driver) UserUpdate(ctx context.Context, p *store.UserUpdateParams) (store.User, error) {
	u, err := scanUser(d.s.writer.QueryRowContext(ctx,
		`UPDATE users SET email = coalesce(?, email), display_name = coalesce(?, display_name),
			password_hash = coalesce(?, password_hash), updated_at = ?
		WHERE id = ? RETURNING `+userColumns,
		strPtr(p.Update.Email), strPtr(p.Update.DisplayName), strPtr(p.Update.PasswordHash), micros(p.Now), p.ID))
	return u, mapErr(err)
}

func (d driver) UserSetDisabled(ctx context.Context, p *store.UserSetDisabledParams) (store.User, error) {
	u, err := scanUser(d.s.writer.QueryRowContext(ctx,
		`UPDATE users SET disabled_at = CASE WHEN ?1 IS NULL THEN NULL ELSE coalesce(disabled_at, ?1) END, updated_at = ?2
		WHERE id = ?3 RETURNING `+userColumns,
		nullMicros(p.At), micros(p.Now), p.ID))
	return u, mapErr(err)
}

func (d driver) UserSwapLoginState(ctx context.Context, p *store.UserSwapLoginStateParams) error {
	n, o := p.Next, p.Prev
	// IS compares NULLs as equal.
	res, err := d.s.writer.ExecContext(ctx,
		`UPDATE users SET failed_logins = ?, failed_since = ?, lockouts = ?, locked_until = ?, last_login_at = ?
		WHERE id = ? AND failed_logins = ? AND failed_since IS ? AND lockouts = ? AND locked_until IS ? AND last_login_at IS ?`,
		n.FailedLogins, nullMicros(n.FailedSince), n.Lockouts, nullMicros(n.LockedUntil), nullMicros(n.LastLoginAt),
		p.ID, o.FailedLogins, nullMicros(o.FailedSince), o.Lockouts, nullMicros(o.LockedUntil), nullMicros(o.LastLoginAt))
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

const userIdentityColumns = `provider, subject, user_id, created_at`

func scanUserIdentity(sc scanner) (store.UserIdentity, error) {
	var (
		i       store.UserIdentity
		created int64
	)
	if err := sc.Scan(&i.Provider, &i.Subject, &i.UserID, &created); err != nil {
		return store.UserIdentity{}, err
	}
	i.CreatedAt = fromMicros(created)
	return i, nil
}

func (d driver) UserIdentityInsert(ctx context.Context, p *store.UserIdentityInsertParams) error {
	i := p.Identity
	_, err := d.s.writer.ExecContext(ctx, `INSERT INTO user_identities (`+userIdentityColumns+`) VALUES (?, ?, ?, ?)`,
		i.Provider, i.Subject, i.UserID, micros(i.CreatedAt))
	return mapErr(err)
}

func (d driver) UserIdentityGet(ctx context.Context, provider, subject string) (store.UserIdentity, error) {
	i, err := scanUserIdentity(d.s.reader.QueryRowContext(ctx,
		`SELECT `+userIdentityColumns+` FROM user_identities WHERE provider = ? AND subject = ?`, provider, subject))
	return i, mapErr(err)
}

func (d driver) UserIdentityList(ctx context.Context, userID string) ([]store.UserIdentity, error) {
	return queryList(ctx, d.s.reader, scanUserIdentity,
		`SELECT `+userIdentityColumns+` FROM user_identities WHERE user_id = ? ORDER BY provider, subject`, userID)
}

func (d driver) UserIdentityDelete(ctx context.Context, provider, subject string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM user_identities WHERE provider = ? AND subject = ?`, provider, subject)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

// memberSelect reads members with their user's address and name.
const memberSelect = `SELECT m.workspace_id, m.user_id, m.role, m.created_at, m.updated_at, u.email, u.display_name
	FROM members m JOIN users u ON u.id = m.user_id`

func scanMember(sc scanner) (store.Member, error) {
	var (
		m                store.Member
		created, updated int64
	)
	if err := sc.Scan(&m.WorkspaceID, &m.UserID, &m.Role, &created, &updated, &m.Email, &m.DisplayName); err != nil {
		return store.Member{}, err
	}
	m.CreatedAt, m.UpdatedAt = fromMicros(created), fromMicros(updated)
	return m, nil
}

func (d driver) MemberInsert(ctx context.Context, p *store.MemberInsertParams) error {
	m := p.Member
	_, err := d.s.writer.ExecContext(ctx,
		`INSERT INTO members (workspace_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
		m.WorkspaceID, m.UserID, string(m.Role), micros(m.CreatedAt), micros(m.UpdatedAt))
	return mapErr(err)
}

func (d driver) MemberGet(ctx context.Context, workspaceID, userID string) (store.Member, error) {
	m, err := scanMember(d.s.reader.QueryRowContext(ctx, memberSelect+` WHERE m.workspace_id = ? AND m.user_id = ?`, workspaceID, userID))
	return m, mapErr(err)
}

func (d driver) MemberList(ctx context.Context, workspaceID string) ([]store.Member, error) {
	return queryList(ctx, d.s.reader, scanMember, memberSelect+` WHERE m.workspace_id = ? ORDER BY m.created_at, m.user_id`, workspaceID)
}

func scanMembership(sc scanner) (store.Membership, error) {
	var (
		ms            store.Membership
		wsCreated, at int64
	)
	if err := sc.Scan(&ms.Workspace.ID, &ms.Workspace.Name, &wsCreated, &ms.Role, &at); err != nil {
		return store.Membership{}, err
	}
	ms.Workspace.CreatedAt, ms.Since = fromMicros(wsCreated), fromMicros(at)
	return ms, nil
}

func (d driver) MemberListByUser(ctx context.Context, userID string) ([]store.Membership, error) {
	return queryList(ctx, d.s.reader, scanMembership,
		`SELECT w.id, w.name, w.created_at, m.role, m.created_at
		FROM members m JOIN workspaces w ON w.id = m.workspace_id WHERE m.user_id = ? ORDER BY w.name`, userID)
}

// keepsOwner is the condition under which a member write may take the
// owner role from the row: the row is no owner, or another owner remains.
// The writer has one connection, and other processes wait for the write
// lock (BEGIN IMMEDIATE), so the count cannot change under the statement.
const keepsOwner = `(role <> 'owner' OR (SELECT count(*) FROM members o WHERE o.workspace_id = members.workspace_id AND o.role = 'owner') > 1)`

// explainMember says why a member write that matched no row did not:
// the member exists (so the owner rule refused it) or not.
func (d driver) explainMember(ctx context.Context, workspaceID, userID string) error {
	var one int
	err := d.s.writer.QueryRowContext(ctx, `SELECT 1 FROM members WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return mapErr(err)
	}
	return store.ErrConflict
}

func (d driver) MemberSetRole(ctx context.Context, p *store.MemberSetRoleParams) (store.Member, error) {
	res, err := d.s.writer.ExecContext(ctx,
		`UPDATE members SET role = ?1, updated_at = ?2 WHERE workspace_id = ?3 AND user_id = ?4 AND (?1 = 'owner' OR `+keepsOwner+`)`,
		string(p.Role), micros(p.Now), p.WorkspaceID, p.UserID)
	if err == nil {
		err = rowsAffected(res)
	}
	if errors.Is(err, store.ErrNotFound) {
		return store.Member{}, d.explainMember(ctx, p.WorkspaceID, p.UserID)
	}
	if err != nil {
		return store.Member{}, mapErr(err)
	}
	m, err := scanMember(d.s.writer.QueryRowContext(ctx, memberSelect+` WHERE m.workspace_id = ? AND m.user_id = ?`, p.WorkspaceID, p.UserID))
	return m, mapErr(err)
}

func (d driver) MemberDelete(ctx context.Context, workspaceID, userID string) error {
	res, err := d.s.writer.ExecContext(ctx,
		`DELETE FROM members WHERE workspace_id = ? AND user_id = ? AND `+keepsOwner, workspaceID, userID)
	if err == nil {
		err = rowsAffected(res)
	}
	if errors.Is(err, store.ErrNotFound) {
		return d.explainMember(ctx, workspaceID, userID)
	}
	return mapErr(err)
}

const sessionColumns = `id, user_id, csrf_token, created_at, last_seen_at, idle_expires_at, expires_at, user_agent, remote_addr`

func scanSession(sc scanner) (store.Session, error) {
	var (
		s                               store.Session
		created, seen, idle, expiresAbs int64
	)
	if err := sc.Scan(&s.ID, &s.UserID, &s.CSRFToken, &created, &seen, &idle, &expiresAbs, &s.UserAgent, &s.RemoteAddr); err != nil {
		return store.Session{}, err
	}
	s.CreatedAt, s.LastSeenAt = fromMicros(created), fromMicros(seen)
	s.IdleExpiresAt, s.ExpiresAt = fromMicros(idle), fromMicros(expiresAbs)
	return s, nil
}

func (d driver) SessionInsert(ctx context.Context, p *store.SessionInsertParams) error {
	s := p.Session
	_, err := d.s.writer.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.UserID, s.CSRFToken, micros(s.CreatedAt), micros(s.LastSeenAt), micros(s.IdleExpiresAt), micros(s.ExpiresAt),
		s.UserAgent, s.RemoteAddr)
	return mapErr(err)
}

const querySessionByHash = `SELECT ` + sessionColumns + ` FROM sessions WHERE id = ? AND idle_expires_at > ?`

// SessionGet runs on every cookie-authenticated request: a statement
// prepared once, as APIKeyGetByHash. idle_expires_at is never after
// expires_at, so it alone decides.
func (d driver) SessionGet(ctx context.Context, p *store.SessionGetParams) (store.Session, error) {
	stmt, err := d.s.readStmt(ctx, querySessionByHash)
	if err != nil {
		return store.Session{}, err
	}
	s, err := scanSession(stmt.QueryRowContext(ctx, p.Hash, micros(p.Now)))
	return s, mapErr(err)
}

func (d driver) SessionListByUser(ctx context.Context, p *store.SessionListByUserParams) ([]store.Session, error) {
	return queryList(ctx, d.s.reader, scanSession,
		`SELECT `+sessionColumns+` FROM sessions WHERE user_id = ? AND idle_expires_at > ? ORDER BY created_at DESC, id DESC`,
		p.UserID, micros(p.Now))
}

func (d driver) SessionTouch(ctx context.Context, p *store.SessionTouchParams) error {
	res, err := d.s.writer.ExecContext(ctx,
		`UPDATE sessions SET last_seen_at = max(last_seen_at, ?), idle_expires_at = min(expires_at, max(idle_expires_at, ?)) WHERE id = ?`,
		micros(p.At), micros(p.IdleExpiresAt), p.Hash)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

func (d driver) SessionDelete(ctx context.Context, hash []byte) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, hash)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

// countDeleted runs a delete and returns how many rows it removed.
func (d driver) countDeleted(ctx context.Context, query string, args ...any) (int, error) {
	res, err := d.s.writer.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func (d driver) SessionDeleteByUser(ctx context.Context, userID string) (int, error) {
	return d.countDeleted(ctx, `DELETE FROM sessions WHERE user_id = ?`, userID)
}

func (d driver) SessionDeleteExpired(ctx context.Context, p *store.SessionDeleteExpiredParams) (int, error) {
	return d.countDeleted(ctx, `DELETE FROM sessions WHERE idle_expires_at <= ?`, micros(p.Now))
}

const invitationColumns = `id, token_hash, workspace_id, role, email, created_by, created_at, expires_at, accepted_at, accepted_by`

func scanInvitation(sc scanner) (store.Invitation, error) {
	var (
		inv              store.Invitation
		created, expires int64
		accepted         sql.NullInt64
	)
	if err := sc.Scan(&inv.ID, &inv.TokenHash, &inv.WorkspaceID, &inv.Role, &inv.Email, &inv.CreatedBy,
		&created, &expires, &accepted, &inv.AcceptedBy); err != nil {
		return store.Invitation{}, err
	}
	inv.CreatedAt, inv.ExpiresAt, inv.AcceptedAt = fromMicros(created), fromMicros(expires), fromNullMicros(accepted)
	return inv, nil
}

func (d driver) InvitationInsert(ctx context.Context, p *store.InvitationInsertParams) error {
	inv := p.Invitation
	_, err := d.s.writer.ExecContext(ctx, `INSERT INTO invitations (`+invitationColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, '')`,
		inv.ID, inv.TokenHash, inv.WorkspaceID, string(inv.Role), inv.Email, inv.CreatedBy, micros(inv.CreatedAt), micros(inv.ExpiresAt))
	return mapErr(err)
}

func (d driver) InvitationGetByHash(ctx context.Context, hash []byte) (store.Invitation, error) {
	inv, err := scanInvitation(d.s.reader.QueryRowContext(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE token_hash = ?`, hash))
	return inv, mapErr(err)
}

func (d driver) InvitationList(ctx context.Context, workspaceID string) ([]store.Invitation, error) {
	return queryList(ctx, d.s.reader, scanInvitation,
		`SELECT `+invitationColumns+` FROM invitations WHERE workspace_id = ? ORDER BY created_at DESC, id DESC`, workspaceID)
}

func (d driver) InvitationAccept(ctx context.Context, p *store.InvitationAcceptParams) (store.Invitation, error) {
	var inv store.Invitation
	err := d.s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		inv, err = scanInvitation(tx.QueryRowContext(ctx,
			`UPDATE invitations SET accepted_at = ?, accepted_by = ?
			WHERE token_hash = ? AND accepted_at IS NULL AND expires_at > ? RETURNING `+invitationColumns,
			micros(p.At), p.UserID, p.Hash, micros(p.At)))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO members (workspace_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (workspace_id, user_id) DO NOTHING`,
			inv.WorkspaceID, p.UserID, string(inv.Role), micros(p.At), micros(p.At))
		return err
	})
	return inv, mapErr(err)
}

func (d driver) InvitationDelete(ctx context.Context, workspaceID, id string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM invitations WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

const signInLinkColumns = `id, token_hash, user_id, created_at, expires_at, used_at`

func scanSignInLink(sc scanner) (store.SignInLink, error) {
	var (
		l                store.SignInLink
		created, expires int64
		used             sql.NullInt64
	)
	if err := sc.Scan(&l.ID, &l.TokenHash, &l.UserID, &created, &expires, &used); err != nil {
		return store.SignInLink{}, err
	}
	l.CreatedAt, l.ExpiresAt, l.UsedAt = fromMicros(created), fromMicros(expires), fromNullMicros(used)
	return l, nil
}

func (d driver) SignInLinkInsert(ctx context.Context, p *store.SignInLinkInsertParams) error {
	l := p.Link
	_, err := d.s.writer.ExecContext(ctx, `INSERT INTO sign_in_links (`+signInLinkColumns+`) VALUES (?, ?, ?, ?, ?, NULL)`,
		l.ID, l.TokenHash, l.UserID, micros(l.CreatedAt), micros(l.ExpiresAt))
	return mapErr(err)
}

func (d driver) SignInLinkGetByHash(ctx context.Context, hash []byte) (store.SignInLink, error) {
	l, err := scanSignInLink(d.s.reader.QueryRowContext(ctx, `SELECT `+signInLinkColumns+` FROM sign_in_links WHERE token_hash = ?`, hash))
	return l, mapErr(err)
}

func (d driver) SignInLinkUse(ctx context.Context, p *store.SignInLinkUseParams) (store.SignInLink, error) {
	l, err := scanSignInLink(d.s.writer.QueryRowContext(ctx,
		`UPDATE sign_in_links SET used_at = ?1 WHERE token_hash = ?2 AND used_at IS NULL AND expires_at > ?1 RETURNING `+signInLinkColumns,
		micros(p.At), p.Hash))
	return l, mapErr(err)
}
