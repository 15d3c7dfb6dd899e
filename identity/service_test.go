package identity

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// countingHasher counts the hashes the service computes.
type countingHasher struct {
	Hasher
	hashes, verifies atomic.Int64
}

func (c *countingHasher) Hash(pw string) (string, error) { c.hashes.Add(1); return c.Hasher.Hash(pw) }
func (c *countingHasher) Verify(pw, enc string) (bool, bool, error) {
	c.verifies.Add(1)
	return c.Hasher.Verify(pw, enc)
}

// clock is a settable time, starting now (the store filters by real time
// too, so the test clock only moves forward from it).
type clock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// auditLog collects the service's events.
type auditLog struct {
	mu     sync.Mutex // guards events
	events []store.AuditEvent
}

func (a *auditLog) record(_ context.Context, e store.AuditEvent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, e)
}

func (a *auditLog) actions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, e := range a.events {
		out = append(out, e.Action)
	}
	return out
}

func (a *auditLog) count(action string) int {
	n := 0
	for _, x := range a.actions() {
		if x == action {
			n++
		}
	}
	return n
}

type fixture struct {
	st     store.Store
	svc    *Service
	hasher *countingHasher
	clock  *clock
	audit  *auditLog
	ws     store.Workspace
}

func openTestStore(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func newFixture(t *testing.T, opts *Options) *fixture {
	t.Helper()
	f := &fixture{st: openTestStore(t), hasher: &countingHasher{Hasher: cheap}, clock: &clock{t: time.Now()}, audit: &auditLog{}}
	ws, err := f.st.Workspaces().GetOrCreate(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	f.ws = ws
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Hasher, o.Now, o.Audit, o.AuditWorkspaceID = f.hasher, f.clock.Now, f.audit.record, ws.ID
	f.svc, err = New(f.st, &o)
	if err != nil {
		t.Fatal(err)
	}
	f.hasher.hashes.Store(0)
	return f
}

const goodPassword = "correct horse battery staple"

func (f *fixture) user(t *testing.T, email string, role Role) store.User {
	t.Helper()
	u, err := f.svc.CreateUser(t.Context(), NewUser{Email: email, Password: goodPassword})
	if err != nil {
		t.Fatal(err)
	}
	if role != "" {
		if _, err := f.svc.AddMember(t.Context(), CLI, f.ws.ID, u.ID, role); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

var client = Client{RemoteAddr: "192.0.2.10:51234", UserAgent: "test"}

func TestLoginAndAuthenticate(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	u := f.user(t, "Ann@Example.com", RoleMember)
	in, err := f.svc.Login(ctx, "  ann@example.COM", goodPassword, client)
	if err != nil {
		t.Fatalf("Login = %v", err)
	}
	if in.Token == "" || len(in.CSRFToken) < 32 || in.User.ID != u.ID || in.Session.UserAgent != "test" {
		t.Fatalf("Login = %+v", in)
	}
	auth, err := f.svc.Authenticate(ctx, in.Token)
	if err != nil || auth.User.ID != u.ID || !CheckCSRF(auth.Session, in.CSRFToken) {
		t.Fatalf("Authenticate = %+v, %v", auth, err)
	}
	if CheckCSRF(auth.Session, "") || CheckCSRF(auth.Session, in.CSRFToken+"x") {
		t.Error("CheckCSRF accepts a wrong token")
	}
	if got, _ := f.svc.User(ctx, u.ID); got.LastLoginAt == nil {
		t.Error("LastLoginAt not stamped")
	}
	// Session fixation: every sign-in is a new session id.
	again, err := f.svc.Login(ctx, "ann@example.com", goodPassword, client)
	if err != nil || again.Token == in.Token || string(again.Session.ID) == string(in.Session.ID) {
		t.Errorf("a second sign-in reused the session: %v", err)
	}
	if _, err := f.svc.Authenticate(ctx, "made-up-token"); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("Authenticate(unknown) = %v", err)
	}
	if err := f.svc.Logout(ctx, in.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Authenticate(ctx, in.Token); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("Authenticate after Logout = %v", err)
	}
	if err := f.svc.Logout(ctx, in.Token); err != nil {
		t.Errorf("Logout twice = %v", err)
	}
	// The user's workspace is the audit workspace: one event per sign-in.
	if n := f.audit.count("auth.login"); n != 2 {
		t.Errorf("auth.login events = %d, want 2", n)
	}
}

// TestLockoutRefusesBeforeHashing is the acceptance check: the 6th wrong
// password within a minute is refused without the hash being computed.
func TestLockoutRefusesBeforeHashing(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	f.user(t, "bob@example.com", RoleMember)
	for i := 1; i <= 4; i++ {
		_, err := f.svc.Login(ctx, "bob@example.com", "wrong password "+string(rune('0'+i)), client)
		if !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("wrong password #%d = %v, want ErrBadCredentials", i, err)
		}
		f.clock.Add(5 * time.Second)
	}
	_, err := f.svc.Login(ctx, "bob@example.com", "wrong password 5", client)
	var te *ThrottleError
	if !errors.As(err, &te) || !te.Account || !errors.Is(err, ErrThrottled) {
		t.Fatalf("5th wrong password = %v, want the account locked", err)
	}
	if !strings.Contains(err.Error(), "locked until") || !strings.Contains(err.Error(), "try again in 1m") {
		t.Errorf("lockout message %q does not say when to retry", err)
	}
	before := f.hasher.verifies.Load()
	for _, pw := range []string{"wrong password 6", goodPassword} {
		_, err = f.svc.Login(ctx, "bob@example.com", pw, client)
		if !errors.As(err, &te) || !te.Account {
			t.Errorf("sign-in while locked = %v, want the lock", err)
		}
	}
	if n := f.hasher.verifies.Load() - before; n != 0 {
		t.Errorf("%d password hashes computed while the account is locked, want 0", n)
	}
	if n := f.audit.count("auth.lockout"); n != 1 {
		t.Errorf("auth.lockout events = %d, want 1", n)
	}

	// After the lock, the right password works; the next lock is longer.
	f.clock.Add(61 * time.Second)
	if _, err := f.svc.Login(ctx, "bob@example.com", goodPassword, client); err != nil {
		t.Fatalf("Login after the lock = %v", err)
	}
	for i := range 5 {
		_, err = f.svc.Login(ctx, "bob@example.com", "wrong again", client)
		_ = i
	}
	if !errors.As(err, &te) || te.RetryAfter() > 61*time.Second {
		t.Errorf("first lock after a good sign-in = %v, want 1 minute again", err)
	}
	f.clock.Add(61 * time.Second)
	for range 5 {
		_, err = f.svc.Login(ctx, "bob@example.com", "wrong again", client)
	}
	if !errors.As(err, &te) || te.RetryAfter() < 119*time.Second || te.RetryAfter() > 121*time.Second {
		t.Errorf("second lock in a row = %v, want 2 minutes", err)
	}
}

func TestFailuresOutsideTheWindowDoNotLock(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	f.user(t, "cy@example.com", "")
	for i := range 12 {
		if _, err := f.svc.Login(ctx, "cy@example.com", "wrong password!", client); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("failure #%d = %v", i, err)
		}
		if i%4 == 3 {
			f.clock.Add(61 * time.Second)
		}
	}
}

func TestUnknownAddressCostsAHash(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	f.user(t, "dee@example.com", RoleMember)
	before := f.hasher.verifies.Load()
	_, err := f.svc.Login(ctx, "nobody@example.com", goodPassword, client)
	if !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("Login(unknown) = %v", err)
	}
	_, err2 := f.svc.Login(ctx, "dee@example.com", "wrong password!!", client)
	if err2 == nil || err.Error() != err2.Error() {
		t.Errorf("unknown address %q and wrong password %q differ", err, err2)
	}
	if n := f.hasher.verifies.Load() - before; n != 2 {
		t.Errorf("%d hashes for an unknown address and a wrong password, want 1 each", n)
	}
	for _, e := range f.audit.events {
		if strings.Contains(string(e.Details), "@") || strings.Contains(string(e.Details), goodPassword) {
			t.Errorf("audit event %s holds personal data: %s", e.Action, e.Details)
		}
	}
	if n := f.audit.count("auth.login_failed"); n != 2 {
		t.Errorf("auth.login_failed events = %d, want 2", n)
	}
}

func TestAddressThrottle(t *testing.T) {
	f := newFixture(t, &Options{AddressFailures: 3, AddressInterval: 10 * time.Second})
	ctx := t.Context()
	for i := range 3 {
		if _, err := f.svc.Login(ctx, "spray"+string(rune('a'+i))+"@example.com", "guess guess guess", client); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("attempt %d = %v", i, err)
		}
	}
	before := f.hasher.verifies.Load()
	_, err := f.svc.Login(ctx, "sprayz@example.com", "guess guess guess", Client{RemoteAddr: "192.0.2.10:6000"})
	var te *ThrottleError
	if !errors.As(err, &te) || te.Account || !strings.Contains(err.Error(), "from this address") {
		t.Fatalf("4th failure from one address = %v, want the address throttled", err)
	}
	if f.hasher.verifies.Load() != before {
		t.Error("a throttled address still costs a hash")
	}
	if _, err := f.svc.Login(ctx, "sprayz@example.com", "guess guess guess", Client{RemoteAddr: "198.51.100.7:1"}); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("another address = %v, want it unthrottled", err)
	}
	f.clock.Add(11 * time.Second)
	if _, err := f.svc.Login(ctx, "sprayz@example.com", "guess guess guess", client); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("after the interval = %v, want one more try", err)
	}
}

func TestDisabledAndPasswordless(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	u := f.user(t, "eve@example.com", RoleMember)
	in, err := f.svc.Login(ctx, "eve@example.com", goodPassword, client)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.SetDisabled(ctx, CLI, u.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Authenticate(ctx, in.Token); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("session of a disabled user = %v", err)
	}
	if _, err := f.svc.Login(ctx, "eve@example.com", goodPassword, client); !errors.Is(err, ErrDisabled) {
		t.Errorf("Login(disabled, right password) = %v, want ErrDisabled", err)
	}
	if _, err := f.svc.Login(ctx, "eve@example.com", "not the password", client); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("Login(disabled, wrong password) = %v, want ErrBadCredentials (disabled is told only to the owner)", err)
	}
	if _, err := f.svc.CreateUser(ctx, NewUser{Email: "oidc@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Login(ctx, "oidc@example.com", "", client); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("Login(user without password, empty password) = %v", err)
	}
	if _, err := f.svc.CreateUser(ctx, NewUser{Email: "short@example.com", Password: "short"}); !errors.Is(err, ErrPasswordTooShort) {
		t.Errorf("CreateUser(short password) = %v", err)
	}
}

func TestRehashOnLogin(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	weak := cheap
	weak.Memory = 32
	h, _ := weak.Hash(goodPassword)
	u, err := f.st.Users().Create(ctx, store.User{Email: "old@example.com", PasswordHash: h})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Login(ctx, "old@example.com", goodPassword, client); err != nil {
		t.Fatal(err)
	}
	got, _ := f.svc.User(ctx, u.ID)
	if got.PasswordHash == h || !strings.Contains(got.PasswordHash, "m=64,") {
		t.Errorf("hash after sign-in = %q, want it rehashed with the current parameters", got.PasswordHash)
	}
	if _, err := f.svc.Login(ctx, "old@example.com", goodPassword, client); err != nil {
		t.Errorf("Login with the new hash = %v", err)
	}
}

func TestSessionTimeouts(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	f.user(t, "fay@example.com", "")
	in, err := f.svc.Login(ctx, "fay@example.com", goodPassword, client)
	if err != nil {
		t.Fatal(err)
	}
	// Touch at most once a minute.
	f.clock.Add(30 * time.Second)
	a, err := f.svc.Authenticate(ctx, in.Token)
	if err != nil || !a.Session.LastSeenAt.Equal(in.Session.LastSeenAt) {
		t.Fatalf("Authenticate after 30 s = %v, last seen %v; want no touch", err, a.Session.LastSeenAt)
	}
	// Used every 11 hours, the session outlives the 12 h idle timeout…
	for i := range 15 { // 165 h
		f.clock.Add(11 * time.Hour)
		if _, err := f.svc.Authenticate(ctx, in.Token); err != nil {
			t.Fatalf("Authenticate after %d × 11 h = %v", i+1, err)
		}
	}
	// …but not the 7 day (168 h) absolute one.
	f.clock.Add(11 * time.Hour)
	if _, err := f.svc.Authenticate(ctx, in.Token); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("Authenticate past the absolute timeout = %v", err)
	}

	idle, err := f.svc.Login(ctx, "fay@example.com", goodPassword, client)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(12*time.Hour + time.Second)
	if _, err := f.svc.Authenticate(ctx, idle.Token); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("Authenticate after 12 h idle = %v", err)
	}
}

func TestLogoutEverywhere(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	u := f.user(t, "gus@example.com", RoleMember)
	other := f.user(t, "hal@example.com", RoleMember)
	var tokens []string
	for range 3 {
		in, err := f.svc.Login(ctx, "gus@example.com", goodPassword, client)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, in.Token)
	}
	keep, _ := f.svc.Login(ctx, "hal@example.com", goodPassword, client)
	if n, err := f.svc.LogoutEverywhere(ctx, u.ID); err != nil || n != 3 {
		t.Fatalf("LogoutEverywhere = %d, %v", n, err)
	}
	for _, tok := range tokens {
		if _, err := f.svc.Authenticate(ctx, tok); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("a session survived signing out everywhere: %v", err)
		}
	}
	if a, err := f.svc.Authenticate(ctx, keep.Token); err != nil || a.User.ID != other.ID {
		t.Errorf("another user's session = %v", err)
	}
	if f.audit.count("auth.logout_everywhere") != 1 {
		t.Errorf("events %v, want auth.logout_everywhere", f.audit.actions())
	}
}

func TestMemberRules(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	owner := f.user(t, "owner@example.com", RoleOwner)
	admin := f.user(t, "admin@example.com", RoleAdmin)
	member := f.user(t, "member@example.com", RoleMember)
	guest := f.user(t, "guest@example.com", RoleGuest)
	newbie := f.user(t, "new@example.com", "")
	asOwner, asAdmin := UserActor(owner.ID, RoleOwner), UserActor(admin.ID, RoleAdmin)
	asMember, asGuest := UserActor(member.ID, RoleMember), UserActor(guest.ID, RoleGuest)

	if _, err := f.svc.AddMember(ctx, asMember, f.ws.ID, newbie.ID, RoleGuest); !errors.Is(err, ErrForbidden) {
		t.Errorf("member adds a member = %v", err)
	}
	if _, err := f.svc.AddMember(ctx, asAdmin, f.ws.ID, newbie.ID, RoleOwner); !errors.Is(err, ErrForbidden) {
		t.Errorf("admin adds an owner = %v", err)
	}
	if _, err := f.svc.AddMember(ctx, asAdmin, f.ws.ID, newbie.ID, RoleAdmin); err != nil {
		t.Errorf("admin adds an admin = %v", err)
	}
	if _, err := f.svc.SetRole(ctx, asAdmin, f.ws.ID, owner.ID, RoleGuest); !errors.Is(err, ErrForbidden) {
		t.Errorf("admin demotes the owner = %v", err)
	}
	if _, err := f.svc.SetRole(ctx, asAdmin, f.ws.ID, member.ID, RoleGuest); err != nil {
		t.Errorf("admin demotes a member = %v", err)
	}
	if _, err := f.svc.SetRole(ctx, asOwner, f.ws.ID, owner.ID, RoleAdmin); !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "last owner") {
		t.Errorf("the last owner demotes themselves = %v, want the last-owner conflict", err)
	}
	if err := f.svc.RemoveMember(ctx, asGuest, f.ws.ID, member.ID); !errors.Is(err, ErrForbidden) {
		t.Errorf("guest removes someone = %v", err)
	}
	if err := f.svc.RemoveMember(ctx, asGuest, f.ws.ID, guest.ID); err != nil {
		t.Errorf("guest leaves = %v", err)
	}
	if _, err := f.svc.Members(ctx, Actor{}, f.ws.ID); !errors.Is(err, ErrForbidden) {
		t.Errorf("a non-member lists members = %v", err)
	}
	list, err := f.svc.Members(ctx, asMember, f.ws.ID)
	if err != nil || len(list) != 4 {
		t.Errorf("Members = %d, %v; want 4", len(list), err)
	}
	if g, err := f.svc.GrantOf(ctx, f.ws.ID, guest.ID); !errors.Is(err, ErrNotMember) {
		t.Errorf("GrantOf(former guest) = %+v, %v", g, err)
	}
	for _, a := range []string{"member.add", "member.role", "member.remove"} {
		if f.audit.count(a) == 0 {
			t.Errorf("no %s event in %v", a, f.audit.actions())
		}
	}
}

func TestInvitations(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	admin := f.user(t, "admin@example.com", RoleAdmin)
	ivy := f.user(t, "ivy@example.com", "")
	jo := f.user(t, "jo@example.com", "")
	asAdmin := UserActor(admin.ID, RoleAdmin)

	if _, err := f.svc.Invite(ctx, asAdmin, f.ws.ID, RoleOwner, ""); !errors.Is(err, ErrForbidden) {
		t.Errorf("admin invites an owner = %v", err)
	}
	inv, err := f.svc.Invite(ctx, asAdmin, f.ws.ID, RoleMember, "")
	if err != nil || inv.Path != InvitationPath+inv.Token || !inv.ExpiresAt.Equal(store.Timestamp(f.clock.Now().Add(7*24*time.Hour))) {
		t.Fatalf("Invite = %+v, %v; want a 7-day link", inv, err)
	}
	m, err := f.svc.AcceptInvitation(ctx, inv.Token, ivy.ID)
	if err != nil || m.Role != RoleMember {
		t.Fatalf("AcceptInvitation = %+v, %v", m, err)
	}
	if _, err := f.svc.AcceptInvitation(ctx, inv.Token, jo.ID); !errors.Is(err, ErrLinkUsed) {
		t.Errorf("second accept = %v, want ErrLinkUsed", err)
	}
	// An invitation to a higher role raises a member; a lower one does not lower.
	up, _ := f.svc.Invite(ctx, asAdmin, f.ws.ID, RoleAdmin, "ivy@example.com")
	if _, err := f.svc.AcceptInvitation(ctx, up.Token, jo.ID); !errors.Is(err, ErrWrongInvitee) {
		t.Errorf("accept an invitation for another address = %v", err)
	}
	if m, err := f.svc.AcceptInvitation(ctx, up.Token, ivy.ID); err != nil || m.Role != RoleAdmin {
		t.Errorf("accept a higher role = %+v, %v", m, err)
	}
	old, _ := f.svc.Invite(ctx, asAdmin, f.ws.ID, RoleGuest, "")
	f.clock.Add(7*24*time.Hour + time.Second)
	if _, err := f.svc.AcceptInvitation(ctx, old.Token, jo.ID); !errors.Is(err, ErrLinkExpired) {
		t.Errorf("accept after 7 days = %v, want ErrLinkExpired", err)
	}
	if _, err := f.svc.AcceptInvitation(ctx, "not-a-token", jo.ID); !errors.Is(err, ErrUnknownLink) {
		t.Errorf("accept unknown = %v", err)
	}

	// Sign up through an invitation.
	fresh, _ := f.svc.Invite(ctx, asAdmin, f.ws.ID, RoleGuest, "")
	if _, err := f.svc.SignUp(ctx, fresh.Token, NewUser{Email: "kim@example.com", Password: "short"}, client); !errors.Is(err, ErrPasswordTooShort) {
		t.Errorf("SignUp(short password) = %v", err)
	}
	in, err := f.svc.SignUp(ctx, fresh.Token, NewUser{Email: "kim@example.com", Password: goodPassword}, client)
	if err != nil {
		t.Fatalf("SignUp = %v", err)
	}
	if g, _ := f.svc.GrantOf(ctx, f.ws.ID, in.User.ID); g.Role != RoleGuest {
		t.Errorf("role after SignUp = %s", g.Role)
	}
	if _, err := f.svc.SignUp(ctx, fresh.Token, NewUser{Email: "lee@example.com", Password: goodPassword}, client); !errors.Is(err, ErrLinkUsed) {
		t.Errorf("SignUp with a used link = %v", err)
	}
	if _, err := f.svc.UserByEmail(ctx, "lee@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a used link created an account: %v", err)
	}
	if f.audit.count("invitation.create") < 4 || f.audit.count("invitation.accept") != 3 {
		t.Errorf("invitation events: %v", f.audit.actions())
	}
}

func TestSignInLinkAndSetup(t *testing.T) {
	f := newFixture(t, nil)
	ctx := t.Context()
	link, fresh, err := f.svc.SetupLink(ctx, "default")
	if err != nil || !fresh || !strings.HasPrefix(link.Path, InvitationPath) {
		t.Fatalf("SetupLink on a fresh install = %+v, %t, %v", link, fresh, err)
	}
	in, err := f.svc.SignUp(ctx, link.Token, NewUser{Email: "root@example.com", Password: goodPassword}, client)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := f.svc.GrantOf(ctx, f.ws.ID, in.User.ID); g.Role != RoleOwner {
		t.Errorf("the setup link made %s, want owner", g.Role)
	}
	if _, fresh, err := f.svc.SetupLink(ctx, "default"); fresh || err != nil {
		t.Errorf("SetupLink with a user = %t, %v; want none", fresh, err)
	}

	u, err := f.svc.CreateUser(ctx, NewUser{Email: "linked@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := f.svc.CreateSignInLink(ctx, CLI, u.ID)
	if err != nil || sl.Path != SignInLinkPath+sl.Token {
		t.Fatalf("CreateSignInLink = %+v, %v", sl, err)
	}
	got, err := f.svc.UseSignInLink(ctx, sl.Token, client)
	if err != nil || got.User.ID != u.ID {
		t.Fatalf("UseSignInLink = %+v, %v", got, err)
	}
	if _, err := f.svc.UseSignInLink(ctx, sl.Token, client); !errors.Is(err, ErrLinkUsed) {
		t.Errorf("second use = %v", err)
	}
	if err := f.svc.SetPassword(ctx, u.ID, goodPassword); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Login(ctx, "linked@example.com", goodPassword, client); err != nil {
		t.Errorf("Login after setting the password = %v", err)
	}
	late, _ := f.svc.CreateSignInLink(ctx, CLI, u.ID)
	f.clock.Add(24*time.Hour + time.Second)
	if _, err := f.svc.UseSignInLink(ctx, late.Token, client); !errors.Is(err, ErrLinkExpired) {
		t.Errorf("use after 24 h = %v", err)
	}
}

func TestWorkspacesAndKeys(t *testing.T) {
	var dropped []string
	f := newFixture(t, &Options{BeforeWorkspaceDelete: func(_ context.Context, id string) error {
		dropped = append(dropped, id)
		return nil
	}})
	ctx := t.Context()
	u := f.user(t, "max@example.com", "")
	ws, err := f.svc.CreateWorkspace(ctx, UserActor(u.ID, ""), "team")
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.svc.ActorOf(ctx, ws.ID, u.ID)
	if err != nil || a.Role != RoleOwner {
		t.Fatalf("creator's role = %+v, %v; want owner", a, err)
	}
	admin := UserActor(u.ID, RoleAdmin)
	if _, err := f.svc.RenameWorkspace(ctx, UserActor(u.ID, RoleMember), ws.ID, "x"); !errors.Is(err, ErrForbidden) {
		t.Errorf("member renames = %v", err)
	}
	if ws, err = f.svc.RenameWorkspace(ctx, admin, ws.ID, "team-2"); err != nil || ws.Name != "team-2" {
		t.Errorf("admin renames = %+v, %v", ws, err)
	}

	if _, _, err := f.svc.CreateAPIKey(ctx, admin, ws.ID, NewAPIKey{Name: "ci", Role: RoleOwner}); !errors.Is(err, ErrForbidden) {
		t.Errorf("admin makes an owner key = %v", err)
	}
	if _, _, err := f.svc.CreateAPIKey(ctx, UserActor(u.ID, RoleMember), ws.ID, NewAPIKey{Name: "ci"}); !errors.Is(err, ErrForbidden) {
		t.Errorf("member makes a key = %v", err)
	}
	token, k, err := f.svc.CreateAPIKey(ctx, admin, ws.ID, NewAPIKey{Name: "webui", Scope: store.APIKeyScopeChat})
	if err != nil || k.Role != RoleMember || k.UserID != u.ID || !strings.HasPrefix(token, APIKeyPrefix) {
		t.Fatalf("CreateAPIKey = %q, %+v, %v", token, k, err)
	}
	got, err := f.st.APIKeys().GetByHash(ctx, HashToken(token))
	if err != nil || got.ID != k.ID {
		t.Errorf("key by hash = %+v, %v", got, err)
	}
	if ka := KeyActor(got); ka.Allows(PermRun) || !ka.Allows(PermChat) {
		t.Errorf("a chat-only member key: run %t chat %t", ka.Allows(PermRun), ka.Allows(PermChat))
	}

	if err := f.svc.DeleteWorkspace(ctx, admin, ws.ID); !errors.Is(err, ErrForbidden) {
		t.Errorf("admin deletes = %v", err)
	}
	if err := f.svc.DeleteWorkspace(ctx, UserActor(u.ID, RoleOwner), ws.ID); err != nil {
		t.Fatalf("owner deletes = %v", err)
	}
	if len(dropped) != 1 || dropped[0] != ws.ID {
		t.Errorf("BeforeWorkspaceDelete got %v", dropped)
	}
	if ms, _ := f.svc.Memberships(ctx, u.ID); len(ms) != 0 {
		t.Errorf("memberships after delete = %+v", ms)
	}
	for _, a := range []string{"workspace.create", "workspace.rename", "apikey.create"} {
		if f.audit.count(a) != 1 {
			t.Errorf("%s events = %d in %v", a, f.audit.count(a), f.audit.actions())
		}
	}
	// The deletion is written to the store's audit log at once, before
	// the workspace goes (a queued event would find it gone), and stays.
	page, err := f.st.AuditLog().List(ctx, store.AuditFilter{WorkspaceID: ws.ID, Action: "workspace.delete"})
	if err != nil || len(page.Events) != 1 || page.Events[0].Actor != UserActorID(u.ID) {
		t.Errorf("workspace.delete in the store's audit log = %+v, %v", page.Events, err)
	}
}

// BenchmarkSessionLookup is Authenticate on SQLite: the work of every
// cookie-authenticated request (the session by hash, then its user).
func BenchmarkSessionLookup(b *testing.B) {
	ctx := context.Background()
	st := openTestStore(b)
	svc, err := New(st, &Options{Hasher: cheap})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.CreateUser(ctx, NewUser{Email: "bench@example.com", Password: goodPassword}); err != nil {
		b.Fatal(err)
	}
	in, err := svc.Login(ctx, "bench@example.com", goodPassword, client)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Authenticate(ctx, in.Token); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLogin is a whole password sign-in on SQLite with the default
// argon2id parameters: lookup, hash, throttle reset, new session.
func BenchmarkLogin(b *testing.B) {
	ctx := context.Background()
	st := openTestStore(b)
	svc, err := New(st, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.CreateUser(ctx, NewUser{Email: "bench@example.com", Password: goodPassword}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := svc.Login(ctx, "bench@example.com", goodPassword, Client{}); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}
