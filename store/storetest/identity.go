package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

// testPHC is a syntactically valid PHC string; the store never checks more.
const testPHC = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U"

func mustUser(t *testing.T, st store.Store, email string) store.User {
	t.Helper()
	u, err := st.Users().Create(t.Context(), store.User{Email: email, PasswordHash: testPHC})
	if err != nil {
		t.Fatalf("Create user %q: %v", email, err)
	}
	return u
}

func mustMember(t *testing.T, st store.Store, ws store.Workspace, u store.User, role store.Role) store.Member {
	t.Helper()
	m, err := st.Members().Add(t.Context(), store.Member{WorkspaceID: ws.ID, UserID: u.ID, Role: role})
	if err != nil {
		t.Fatalf("Add member %s as %s: %v", u.Email, role, err)
	}
	return m
}

func tokenHash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func testIdentity(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Users", func(t *testing.T) { testUsers(t, open) })
	t.Run("UserIdentities", func(t *testing.T) { testUserIdentities(t, open) })
	t.Run("Members", func(t *testing.T) { testMembers(t, open) })
	t.Run("Sessions", func(t *testing.T) { testSessions(t, open) })
	t.Run("Invitations", func(t *testing.T) { testInvitations(t, open) })
	t.Run("SignInLinks", func(t *testing.T) { testSignInLinks(t, open) })
	t.Run("WorkspaceRenameDelete", func(t *testing.T) { testWorkspaceRenameDelete(t, open) })
	t.Run("APIKeyRoles", func(t *testing.T) { testAPIKeyRoles(t, open) })
}

func testUsers(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetList", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		users := st.Users()
		if n, err := users.Count(ctx); err != nil || n != 0 {
			t.Fatalf("Count() on a fresh store = %d, %v; want 0", n, err)
		}
		before := time.Now()
		bob, err := users.Create(ctx, store.User{Email: "  Bob@Example.COM ", DisplayName: "Bob", PasswordHash: testPHC})
		if err != nil {
			t.Fatalf("Create(bob) = %v", err)
		}
		after := time.Now()
		if bob.ID == "" || bob.Email != "bob@example.com" {
			t.Errorf("Create(bob) = id %q email %q; want an id and the address normalized", bob.ID, bob.Email)
		}
		checkStamp(t, "CreatedAt", bob.CreatedAt, before, after)
		if !bob.UpdatedAt.Equal(bob.CreatedAt) {
			t.Errorf("UpdatedAt %v != CreatedAt %v on create", bob.UpdatedAt, bob.CreatedAt)
		}
		// An OIDC-only user has no password.
		alice, err := users.Create(ctx, store.User{Email: "alice@example.com"})
		if err != nil {
			t.Fatalf("Create(alice, no password) = %v", err)
		}

		got, err := users.Get(ctx, bob.ID)
		if err != nil {
			t.Fatalf("Get(bob) = %v", err)
		}
		if diff := cmp.Diff(bob, got); diff != "" {
			t.Errorf("Get(bob) mismatch (-created +got):\n%s", diff)
		}
		got, err = users.GetByEmail(ctx, "BOB@example.com")
		if err != nil {
			t.Fatalf("GetByEmail(other case) = %v", err)
		}
		if got.ID != bob.ID || got.PasswordHash != testPHC {
			t.Errorf("GetByEmail(other case) = %+v, want bob with his hash", got)
		}
		list, err := users.List(ctx)
		if err != nil {
			t.Fatalf("List() = %v", err)
		}
		if diff := cmp.Diff([]store.User{alice, bob}, list); diff != "" {
			t.Errorf("List() mismatch, want ordered by e-mail (-want +got):\n%s", diff)
		}
		if n, err := users.Count(ctx); err != nil || n != 2 {
			t.Errorf("Count() = %d, %v; want 2", n, err)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		users := st.Users()
		mustUser(t, st, "taken@example.com")
		_, err := users.Create(ctx, store.User{Email: "TAKEN@example.com"})
		wantErr(t, "Create(address taken, other case)", err, store.ErrConflict)
		if err != nil && !strings.Contains(err.Error(), "taken@example.com") {
			t.Errorf("Create(address taken) = %q, want it to name the address", err)
		}
		for _, email := range []string{"", "no-at-sign", "@example.com", "a@", "a b@example.com", "a@b@c", strings.Repeat("a", 250) + "@b.cd"} {
			_, err := users.Create(ctx, store.User{Email: email})
			wantErr(t, "Create(email "+email+")", err, store.ErrInvalid)
		}
		_, err = users.Create(ctx, store.User{Email: "plain@example.com", PasswordHash: "hunter2hunter2"})
		wantErr(t, "Create(password in clear)", err, store.ErrInvalid)
		_, err = users.Get(ctx, store.NewID())
		wantErr(t, "Get(unknown)", err, store.ErrNotFound)
		_, err = users.GetByEmail(ctx, "nobody@example.com")
		wantErr(t, "GetByEmail(unknown)", err, store.ErrNotFound)
		_, err = users.Update(ctx, store.NewID(), store.UserUpdate{})
		wantErr(t, "Update(unknown)", err, store.ErrNotFound)
		_, err = users.SetDisabled(ctx, store.NewID(), true)
		wantErr(t, "SetDisabled(unknown)", err, store.ErrNotFound)
		err = users.SwapLoginState(ctx, store.NewID(), store.LoginState{}, store.LoginState{FailedLogins: 1})
		wantErr(t, "SwapLoginState(unknown)", err, store.ErrNotFound)
	})

	t.Run("Update", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		users := st.Users()
		u := mustUser(t, st, "old@example.com")
		other := mustUser(t, st, "other@example.com")
		email, name, hash := " New@Example.com", "New Name", "$argon2id$new"
		got, err := users.Update(ctx, u.ID, store.UserUpdate{Email: &email, DisplayName: &name, PasswordHash: &hash})
		if err != nil {
			t.Fatalf("Update = %v", err)
		}
		if got.Email != "new@example.com" || got.DisplayName != name || got.PasswordHash != hash || !got.CreatedAt.Equal(u.CreatedAt) || got.UpdatedAt.Before(u.UpdatedAt) {
			t.Errorf("Update = %+v, want the new values, normalized address, same CreatedAt", got)
		}
		// Nil fields stay.
		empty := ""
		got, err = users.Update(ctx, u.ID, store.UserUpdate{PasswordHash: &empty})
		if err != nil || got.Email != "new@example.com" || got.DisplayName != name || got.PasswordHash != "" {
			t.Errorf("Update(clear password) = %+v, %v; want only the hash cleared", got, err)
		}
		taken := "OTHER@example.com"
		_, err = users.Update(ctx, u.ID, store.UserUpdate{Email: &taken})
		wantErr(t, "Update(address of another user)", err, store.ErrConflict)
		bad := "not an address"
		_, err = users.Update(ctx, u.ID, store.UserUpdate{Email: &bad})
		wantErr(t, "Update(bad address)", err, store.ErrInvalid)
		clear := "hunter2hunter2"
		_, err = users.Update(ctx, u.ID, store.UserUpdate{PasswordHash: &clear})
		wantErr(t, "Update(password in clear)", err, store.ErrInvalid)
		if g, _ := users.Get(ctx, other.ID); g.Email != "other@example.com" {
			t.Errorf("the other user changed: %+v", g)
		}
	})

	t.Run("SetDisabled", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		users := st.Users()
		u := mustUser(t, st, "d@example.com")
		before := time.Now()
		got, err := users.SetDisabled(ctx, u.ID, true)
		after := time.Now()
		if err != nil || got.DisabledAt == nil {
			t.Fatalf("SetDisabled(true) = %+v, %v", got, err)
		}
		checkStamp(t, "DisabledAt", *got.DisabledAt, before, after)
		first := *got.DisabledAt
		time.Sleep(2 * time.Millisecond)
		again, err := users.SetDisabled(ctx, u.ID, true)
		if err != nil || again.DisabledAt == nil || !again.DisabledAt.Equal(first) {
			t.Errorf("SetDisabled(true) again = %v, %v; want the first time %v kept", again.DisabledAt, err, first)
		}
		enabled, err := users.SetDisabled(ctx, u.ID, false)
		if err != nil || enabled.DisabledAt != nil {
			t.Errorf("SetDisabled(false) = %v, %v; want nil", enabled.DisabledAt, err)
		}
	})

	t.Run("SwapLoginState", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		users := st.Users()
		u := mustUser(t, st, "s@example.com")
		t1 := time.Date(2025, 6, 1, 12, 0, 0, 123456789, time.UTC)
		next := store.LoginState{FailedLogins: 1, FailedSince: &t1}
		if err := users.SwapLoginState(ctx, u.ID, u.LoginState, next); err != nil {
			t.Fatalf("SwapLoginState(fresh → 1 failure) = %v", err)
		}
		// A swap from a state that is no longer stored is refused.
		err := users.SwapLoginState(ctx, u.ID, u.LoginState, store.LoginState{FailedLogins: 7})
		wantErr(t, "SwapLoginState(stale prev)", err, store.ErrConflict)
		got, err := users.Get(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := store.LoginState{FailedLogins: 1, FailedSince: ptr(t1.Truncate(time.Microsecond))}
		if diff := cmp.Diff(want, got.LoginState); diff != "" {
			t.Errorf("LoginState after swap (-want +got):\n%s", diff)
		}
		// The state read back is a valid prev (times normalized alike).
		lock := t1.Add(time.Minute)
		locked := store.LoginState{Lockouts: 1, LockedUntil: &lock, LastLoginAt: &t1}
		if err := users.SwapLoginState(ctx, u.ID, store.LoginState{FailedLogins: 1, FailedSince: &t1}, locked); err != nil {
			t.Fatalf("SwapLoginState(prev with unnormalized time) = %v", err)
		}
		err = users.SwapLoginState(ctx, u.ID, locked, store.LoginState{FailedLogins: -1})
		wantErr(t, "SwapLoginState(negative)", err, store.ErrInvalid)

		// Concurrent failures in "several processes" each read, compute and
		// swap, retrying on conflict: none is lost.
		v := mustUser(t, st, "race@example.com")
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				for {
					cur, err := users.Get(ctx, v.ID)
					if err != nil {
						errs[i] = err
						return
					}
					next := cur.LoginState
					next.FailedLogins++
					err = users.SwapLoginState(ctx, v.ID, cur.LoginState, next)
					if errors.Is(err, store.ErrConflict) {
						continue
					}
					errs[i] = err
					return
				}
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("swap #%d = %v", i, err)
			}
		}
		if got, _ := users.Get(ctx, v.ID); got.FailedLogins != n {
			t.Errorf("FailedLogins after %d concurrent increments = %d", n, got.FailedLogins)
		}
	})
}

func testUserIdentities(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("LinkLookupUnlink", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		ids := st.UserIdentities()
		u, v := mustUser(t, st, "u@example.com"), mustUser(t, st, "v@example.com")
		before := time.Now()
		line, err := ids.Link(ctx, store.UserIdentity{Provider: "line", Subject: "U123", UserID: u.ID})
		if err != nil {
			t.Fatalf("Link(line) = %v", err)
		}
		checkStamp(t, "CreatedAt", line.CreatedAt, before, time.Now())
		oidc, err := ids.Link(ctx, store.UserIdentity{Provider: "https://idp.example.com", Subject: "sub-1", UserID: u.ID})
		if err != nil {
			t.Fatalf("Link(oidc) = %v", err)
		}
		// The same subject at another provider is another identity.
		if _, err := ids.Link(ctx, store.UserIdentity{Provider: "https://other.example.com", Subject: "sub-1", UserID: v.ID}); err != nil {
			t.Fatalf("Link(same subject, other provider) = %v", err)
		}
		got, err := ids.Lookup(ctx, "line", "U123")
		if err != nil || got.UserID != u.ID {
			t.Errorf("Lookup(line) = %+v, %v; want user u", got, err)
		}
		list, err := ids.List(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]store.UserIdentity{oidc, line}, list); diff != "" {
			t.Errorf("List(u) mismatch, want by provider (-want +got):\n%s", diff)
		}

		_, err = ids.Link(ctx, store.UserIdentity{Provider: "line", Subject: "U123", UserID: v.ID})
		wantErr(t, "Link(subject linked to another user)", err, store.ErrConflict)
		_, err = ids.Link(ctx, store.UserIdentity{Provider: "line", Subject: "U999", UserID: store.NewID()})
		wantErr(t, "Link(unknown user)", err, store.ErrNotFound)
		if err != nil && !strings.Contains(err.Error(), "user") {
			t.Errorf("Link(unknown user) = %q, want it to say the user is missing", err)
		}
		_, err = ids.Link(ctx, store.UserIdentity{Provider: "line", UserID: u.ID})
		wantErr(t, "Link(no subject)", err, store.ErrInvalid)

		if err := ids.Unlink(ctx, "line", "U123"); err != nil {
			t.Fatalf("Unlink = %v", err)
		}
		_, err = ids.Lookup(ctx, "line", "U123")
		wantErr(t, "Lookup(unlinked)", err, store.ErrNotFound)
		wantErr(t, "Unlink(again)", ids.Unlink(ctx, "line", "U123"), store.ErrNotFound)
	})
}

func testMembers(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("AddGetList", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		owner := mustUser(t, st, "owner@example.com")
		guest, err := st.Users().Create(ctx, store.User{Email: "guest@example.com", DisplayName: "Guest"})
		if err != nil {
			t.Fatal(err)
		}
		mem := st.Members()
		before := time.Now()
		mo := mustMember(t, st, a, owner, store.RoleOwner)
		checkStamp(t, "CreatedAt", mo.CreatedAt, before, time.Now())
		if mo.Email != owner.Email || mo.Role != store.RoleOwner {
			t.Errorf("Add = %+v, want the user's address filled and role owner", mo)
		}
		mg := mustMember(t, st, a, guest, store.RoleGuest)
		if mg.DisplayName != "Guest" {
			t.Errorf("Add(guest).DisplayName = %q", mg.DisplayName)
		}
		mustMember(t, st, b, owner, store.RoleMember)

		got, err := mem.Get(ctx, a.ID, guest.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(mg, got); diff != "" {
			t.Errorf("Get mismatch (-added +got):\n%s", diff)
		}
		list, err := mem.List(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]store.Member{mo, mg}, list); diff != "" {
			t.Errorf("List(a) mismatch, want oldest first (-want +got):\n%s", diff)
		}
		ms, err := mem.ListByUser(ctx, owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 2 || ms[0].Workspace != a || ms[0].Role != store.RoleOwner || ms[1].Workspace != b || ms[1].Role != store.RoleMember {
			t.Errorf("ListByUser(owner) = %+v, want a as owner then b as member", ms)
		}

		// Workspace isolation.
		_, err = mem.Get(ctx, b.ID, guest.ID)
		wantErr(t, "Get(b, member of a)", err, store.ErrNotFound)
		_, err = mem.SetRole(ctx, b.ID, guest.ID, store.RoleAdmin)
		wantErr(t, "SetRole(b, member of a)", err, store.ErrNotFound)
		wantErr(t, "Remove(b, member of a)", mem.Remove(ctx, b.ID, guest.ID), store.ErrNotFound)
		if got, _ := mem.Get(ctx, a.ID, guest.ID); got.Role != store.RoleGuest {
			t.Errorf("guest's role in a after refused writes from b = %s", got.Role)
		}

		_, err = mem.Add(ctx, store.Member{WorkspaceID: a.ID, UserID: guest.ID, Role: store.RoleAdmin})
		wantErr(t, "Add(member already)", err, store.ErrConflict)
		_, err = mem.Add(ctx, store.Member{WorkspaceID: a.ID, UserID: store.NewID(), Role: store.RoleAdmin})
		wantErr(t, "Add(unknown user)", err, store.ErrNotFound)
		if err != nil && !strings.Contains(err.Error(), "user") {
			t.Errorf("Add(unknown user) = %q, want it to name the user", err)
		}
		_, err = mem.Add(ctx, store.Member{WorkspaceID: store.NewID(), UserID: guest.ID, Role: store.RoleAdmin})
		wantErr(t, "Add(unknown workspace)", err, store.ErrNotFound)
		_, err = mem.Add(ctx, store.Member{WorkspaceID: b.ID, UserID: guest.ID, Role: "superuser"})
		wantErr(t, "Add(bad role)", err, store.ErrInvalid)
		_, err = mem.SetRole(ctx, a.ID, guest.ID, "root")
		wantErr(t, "SetRole(bad role)", err, store.ErrInvalid)
	})

	t.Run("LastOwner", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		ws := mustWorkspace(t, st, "w")
		o1, o2, m := mustUser(t, st, "o1@example.com"), mustUser(t, st, "o2@example.com"), mustUser(t, st, "m@example.com")
		mem := st.Members()
		mustMember(t, st, ws, o1, store.RoleOwner)
		mustMember(t, st, ws, m, store.RoleMember)

		_, err := mem.SetRole(ctx, ws.ID, o1.ID, store.RoleAdmin)
		wantErr(t, "SetRole(last owner → admin)", err, store.ErrConflict)
		if err != nil && !strings.Contains(err.Error(), "last owner") {
			t.Errorf("SetRole(last owner) = %q, want it to say last owner", err)
		}
		wantErr(t, "Remove(last owner)", mem.Remove(ctx, ws.ID, o1.ID), store.ErrConflict)
		// Owner to owner is no demotion.
		if _, err := mem.SetRole(ctx, ws.ID, o1.ID, store.RoleOwner); err != nil {
			t.Errorf("SetRole(last owner → owner) = %v", err)
		}
		// Other members change freely.
		got, err := mem.SetRole(ctx, ws.ID, m.ID, store.RoleAdmin)
		if err != nil || got.Role != store.RoleAdmin {
			t.Fatalf("SetRole(member → admin) = %+v, %v", got, err)
		}
		if got.UpdatedAt.Before(got.CreatedAt) {
			t.Errorf("UpdatedAt %v before CreatedAt %v", got.UpdatedAt, got.CreatedAt)
		}

		mustMember(t, st, ws, o2, store.RoleOwner)
		if _, err := mem.SetRole(ctx, ws.ID, o1.ID, store.RoleMember); err != nil {
			t.Fatalf("SetRole(one of two owners → member) = %v", err)
		}
		wantErr(t, "Remove(o2, now the last owner)", mem.Remove(ctx, ws.ID, o2.ID), store.ErrConflict)
		if err := mem.Remove(ctx, ws.ID, o1.ID); err != nil {
			t.Errorf("Remove(former owner) = %v", err)
		}
		wantErr(t, "Remove(gone)", mem.Remove(ctx, ws.ID, o1.ID), store.ErrNotFound)
	})

	t.Run("LastOwnerConcurrent", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		ws := mustWorkspace(t, st, "w")
		const n = 4
		owners := make([]store.User, n)
		for i := range owners {
			owners[i] = mustUser(t, st, string(rune('a'+i))+"@example.com")
			mustMember(t, st, ws, owners[i], store.RoleOwner)
		}
		// Every owner is demoted or removed at once: one must remain.
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, n)
		for i, o := range owners {
			wg.Go(func() {
				<-start
				if i%2 == 0 {
					_, errs[i] = st.Members().SetRole(ctx, ws.ID, o.ID, store.RoleMember)
				} else {
					errs[i] = st.Members().Remove(ctx, ws.ID, o.ID)
				}
			})
		}
		close(start)
		wg.Wait()
		refused := 0
		for i, err := range errs {
			switch {
			case errors.Is(err, store.ErrConflict):
				refused++
			case err != nil:
				t.Errorf("write #%d = %v", i, err)
			}
		}
		list, err := st.Members().List(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		left := 0
		for _, m := range list {
			if m.Role == store.RoleOwner {
				left++
			}
		}
		if left != 1 || refused != 1 {
			t.Errorf("after %d concurrent demotions: %d owners left, %d refused; want 1 and 1", n, left, refused)
		}
	})
}

func testSessions(t *testing.T, open func(t *testing.T) store.Store) {
	newSession := func(u store.User, token string, idle, abs time.Duration) store.Session {
		now := time.Now()
		return store.Session{ID: tokenHash(token), UserID: u.ID, CSRFToken: "csrf-" + token + "-0123456789",
			IdleExpiresAt: now.Add(idle), ExpiresAt: now.Add(abs), UserAgent: "Mozilla/5.0", RemoteAddr: "192.0.2.1"}
	}
	t.Run("CreateGetTouch", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		u, v := mustUser(t, st, "u@example.com"), mustUser(t, st, "v@example.com")
		ss := st.Sessions()
		before := time.Now()
		in := newSession(u, "t1", time.Hour, 24*time.Hour)
		in.UserAgent = strings.Repeat("é", 200) // 400 bytes: cut at a rune boundary
		s1, err := ss.Create(ctx, in)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		checkStamp(t, "CreatedAt", s1.CreatedAt, before, time.Now())
		if !s1.LastSeenAt.Equal(s1.CreatedAt) || len(s1.UserAgent) > store.MaxSessionUserAgent || !strings.HasPrefix(strings.Repeat("é", 200), s1.UserAgent) {
			t.Errorf("Create = %+v; want LastSeenAt = CreatedAt and the user agent cut at a rune boundary", s1)
		}
		got, err := ss.GetByHash(ctx, tokenHash("t1"))
		if err != nil {
			t.Fatalf("GetByHash = %v", err)
		}
		if diff := cmp.Diff(s1, got); diff != "" {
			t.Errorf("GetByHash mismatch (-created +got):\n%s", diff)
		}
		s2, err := ss.Create(ctx, newSession(u, "t2", time.Hour, 24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ss.Create(ctx, newSession(v, "tv", time.Hour, 24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		list, err := ss.ListByUser(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || string(list[0].ID) != string(s2.ID) || string(list[1].ID) != string(s1.ID) {
			t.Errorf("ListByUser(u) = %d sessions, want s2 then s1", len(list))
		}

		// Touch moves idle expiry forward, never past the absolute one.
		at := time.Now().Add(time.Minute)
		if err := ss.Touch(ctx, s1.ID, at, at.Add(time.Hour)); err != nil {
			t.Fatalf("Touch = %v", err)
		}
		got, _ = ss.GetByHash(ctx, s1.ID)
		if !got.LastSeenAt.Equal(store.Timestamp(at)) || !got.IdleExpiresAt.Equal(store.Timestamp(at.Add(time.Hour))) {
			t.Errorf("after Touch: last seen %v idle %v; want %v and %v", got.LastSeenAt, got.IdleExpiresAt, at, at.Add(time.Hour))
		}
		if err := ss.Touch(ctx, s1.ID, at.Add(-time.Hour), at); err != nil {
			t.Fatalf("Touch(older) = %v", err)
		}
		if g, _ := ss.GetByHash(ctx, s1.ID); !g.LastSeenAt.Equal(got.LastSeenAt) || !g.IdleExpiresAt.Equal(got.IdleExpiresAt) {
			t.Errorf("an older Touch moved the session back: %v %v", g.LastSeenAt, g.IdleExpiresAt)
		}
		if err := ss.Touch(ctx, s1.ID, at, at.Add(100*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if g, _ := ss.GetByHash(ctx, s1.ID); !g.IdleExpiresAt.Equal(s1.ExpiresAt) {
			t.Errorf("Touch past the absolute expiry: idle %v, absolute %v", g.IdleExpiresAt, s1.ExpiresAt)
		}
		wantErr(t, "Touch(unknown)", ss.Touch(ctx, tokenHash("nope"), at, at), store.ErrNotFound)
	})

	t.Run("ExpiryAndDelete", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		u, v := mustUser(t, st, "u@example.com"), mustUser(t, st, "v@example.com")
		ss := st.Sessions()
		idleGone, err := ss.Create(ctx, newSession(u, "idle", -time.Second, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		_, err = ss.GetByHash(ctx, idleGone.ID)
		wantErr(t, "GetByHash(idle-expired)", err, store.ErrNotFound)
		if list, _ := ss.ListByUser(ctx, u.ID); len(list) != 0 {
			t.Errorf("ListByUser lists an expired session")
		}
		for _, tok := range []string{"a", "b"} {
			if _, err := ss.Create(ctx, newSession(u, tok, time.Hour, time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		keep, err := ss.Create(ctx, newSession(v, "v", time.Hour, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if n, err := ss.DeleteExpired(ctx, time.Now()); err != nil || n != 1 {
			t.Errorf("DeleteExpired = %d, %v; want 1", n, err)
		}
		if err := ss.Delete(ctx, tokenHash("a")); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		wantErr(t, "Delete(again)", ss.Delete(ctx, tokenHash("a")), store.ErrNotFound)
		if n, err := ss.DeleteByUser(ctx, u.ID); err != nil || n != 1 {
			t.Errorf("DeleteByUser(u) = %d, %v; want 1 (b)", n, err)
		}
		if _, err := ss.GetByHash(ctx, keep.ID); err != nil {
			t.Errorf("v's session after signing u out everywhere: %v", err)
		}
		if n, err := ss.DeleteExpired(ctx, time.Now().Add(2*time.Hour)); err != nil || n != 1 {
			t.Errorf("DeleteExpired(later) = %d, %v; want 1", n, err)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		u := mustUser(t, st, "u@example.com")
		ss := st.Sessions()
		bad := newSession(u, "x", time.Hour, time.Hour)
		bad.ID = []byte("the-token-itself")
		_, err := ss.Create(ctx, bad)
		wantErr(t, "Create(token in clear)", err, store.ErrInvalid)
		bad = newSession(u, "x", 2*time.Hour, time.Hour)
		_, err = ss.Create(ctx, bad)
		wantErr(t, "Create(idle after absolute)", err, store.ErrInvalid)
		bad = newSession(u, "x", time.Hour, time.Hour)
		bad.CSRFToken = "short"
		_, err = ss.Create(ctx, bad)
		wantErr(t, "Create(short CSRF token)", err, store.ErrInvalid)
		_, err = ss.Create(ctx, newSession(store.User{ID: store.NewID()}, "x", time.Hour, time.Hour))
		wantErr(t, "Create(unknown user)", err, store.ErrNotFound)
		if _, err := ss.Create(ctx, newSession(u, "dup", time.Hour, time.Hour)); err != nil {
			t.Fatal(err)
		}
		_, err = ss.Create(ctx, newSession(u, "dup", time.Hour, time.Hour))
		wantErr(t, "Create(same id)", err, store.ErrConflict)
		_, err = ss.GetByHash(ctx, tokenHash("never"))
		wantErr(t, "GetByHash(unknown)", err, store.ErrNotFound)
	})
}

func testInvitations(t *testing.T, open func(t *testing.T) store.Store) {
	invite := func(ws store.Workspace, token string, role store.Role, ttl time.Duration) store.Invitation {
		return store.Invitation{TokenHash: tokenHash(token), WorkspaceID: ws.ID, Role: role, CreatedBy: "cli", ExpiresAt: time.Now().Add(ttl)}
	}
	t.Run("CreateAccept", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		u, v := mustUser(t, st, "u@example.com"), mustUser(t, st, "v@example.com")
		invs := st.Invitations()
		in := invite(a, "i1", store.RoleAdmin, time.Hour)
		in.Email = " U@Example.com"
		before := time.Now()
		i1, err := invs.Create(ctx, in)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		checkStamp(t, "CreatedAt", i1.CreatedAt, before, time.Now())
		if i1.ID == "" || i1.Email != "u@example.com" || i1.AcceptedAt != nil {
			t.Errorf("Create = %+v, want an id, the address normalized, not accepted", i1)
		}
		i2, err := invs.Create(ctx, invite(a, "i2", store.RoleGuest, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		got, err := invs.GetByHash(ctx, tokenHash("i1"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(i1, got); diff != "" {
			t.Errorf("GetByHash mismatch (-created +got):\n%s", diff)
		}
		list, err := invs.List(ctx, a.ID)
		if err != nil || len(list) != 2 || list[0].ID != i2.ID || list[1].ID != i1.ID {
			t.Errorf("List(a) = %+v, %v; want i2, i1 (newest first)", list, err)
		}
		if list, _ := invs.List(ctx, b.ID); len(list) != 0 {
			t.Errorf("List(b) lists a's invitations")
		}
		wantErr(t, "Delete(b, invitation of a)", invs.Delete(ctx, b.ID, i2.ID), store.ErrNotFound)

		at := time.Now()
		acc, err := invs.Accept(ctx, tokenHash("i1"), u.ID, at)
		if err != nil {
			t.Fatalf("Accept = %v", err)
		}
		if acc.AcceptedAt == nil || !acc.AcceptedAt.Equal(store.Timestamp(at)) || acc.AcceptedBy != u.ID {
			t.Errorf("Accept = %+v, want accepted at %v by u", acc, at)
		}
		m, err := st.Members().Get(ctx, a.ID, u.ID)
		if err != nil || m.Role != store.RoleAdmin {
			t.Errorf("membership after Accept = %+v, %v; want admin of a", m, err)
		}
		stored, err := invs.Accept(ctx, tokenHash("i1"), v.ID, time.Now())
		wantErr(t, "Accept(again)", err, store.ErrConflict)
		if stored.AcceptedBy != u.ID || err == nil || !strings.Contains(err.Error(), "accepted already") {
			t.Errorf("Accept(again) = %+v, %v; want the stored invitation and 'accepted already'", stored, err)
		}
		if _, err := st.Members().Get(ctx, a.ID, v.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("v became a member through a used invitation: %v", err)
		}
		// A member already keeps their role.
		if _, err := invs.Accept(ctx, tokenHash("i2"), u.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		if m, _ := st.Members().Get(ctx, a.ID, u.ID); m.Role != store.RoleAdmin {
			t.Errorf("accepting a guest invitation changed an admin's role to %s", m.Role)
		}

		_, err = invs.Accept(ctx, tokenHash("never"), u.ID, time.Now())
		wantErr(t, "Accept(unknown)", err, store.ErrNotFound)
		if err := invs.Delete(ctx, a.ID, i2.ID); err != nil {
			t.Errorf("Delete = %v", err)
		}
	})

	t.Run("ExpiredAndErrors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		u := mustUser(t, st, "u@example.com")
		invs := st.Invitations()
		if _, err := invs.Create(ctx, invite(a, "old", store.RoleMember, time.Minute)); err != nil {
			t.Fatal(err)
		}
		stored, err := invs.Accept(ctx, tokenHash("old"), u.ID, time.Now().Add(time.Hour))
		wantErr(t, "Accept(expired)", err, store.ErrConflict)
		if err == nil || !strings.Contains(err.Error(), "expired") || stored.ID == "" {
			t.Errorf("Accept(expired) = %+v, %v; want the stored invitation and 'expired'", stored, err)
		}
		_, err = invs.Accept(ctx, tokenHash("old"), store.NewID(), time.Now())
		wantErr(t, "Accept(unknown user)", err, store.ErrNotFound)
		if got, _ := invs.GetByHash(ctx, tokenHash("old")); got.AcceptedAt != nil {
			t.Errorf("an Accept by an unknown user consumed the invitation")
		}
		_, err = invs.Create(ctx, invite(a, "bad", "root", time.Hour))
		wantErr(t, "Create(bad role)", err, store.ErrInvalid)
		bad := invite(a, "bad", store.RoleMember, time.Hour)
		bad.TokenHash = []byte("token")
		_, err = invs.Create(ctx, bad)
		wantErr(t, "Create(token in clear)", err, store.ErrInvalid)
		_, err = invs.Create(ctx, invite(store.Workspace{ID: store.NewID()}, "x", store.RoleMember, time.Hour))
		wantErr(t, "Create(unknown workspace)", err, store.ErrNotFound)
		bad = invite(a, "bad", store.RoleMember, time.Hour)
		bad.Email = "nope"
		_, err = invs.Create(ctx, bad)
		wantErr(t, "Create(bad address)", err, store.ErrInvalid)
	})

	t.Run("AcceptConcurrent", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		if _, err := st.Invitations().Create(ctx, invite(a, "once", store.RoleMember, time.Hour)); err != nil {
			t.Fatal(err)
		}
		const n = 6
		users := make([]store.User, n)
		for i := range users {
			users[i] = mustUser(t, st, string(rune('a'+i))+"@example.com")
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, n)
		for i, u := range users {
			wg.Go(func() {
				<-start
				_, errs[i] = st.Invitations().Accept(ctx, tokenHash("once"), u.ID, time.Now())
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("Accept #%d = %v", i, err)
			}
		}
		list, _ := st.Members().List(ctx, a.ID)
		if won != 1 || len(list) != 1 {
			t.Errorf("%d concurrent accepts: %d succeeded, %d members; want 1 and 1", n, won, len(list))
		}
	})
}

func testSignInLinks(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("UseOnce", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		u := mustUser(t, st, "u@example.com")
		links := st.SignInLinks()
		before := time.Now()
		l, err := links.Create(ctx, store.SignInLink{TokenHash: tokenHash("l1"), UserID: u.ID, ExpiresAt: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		checkStamp(t, "CreatedAt", l.CreatedAt, before, time.Now())
		at := time.Now()
		used, err := links.Use(ctx, tokenHash("l1"), at)
		if err != nil || used.UsedAt == nil || !used.UsedAt.Equal(store.Timestamp(at)) || used.UserID != u.ID {
			t.Fatalf("Use = %+v, %v; want used at %v for u", used, err, at)
		}
		stored, err := links.Use(ctx, tokenHash("l1"), time.Now())
		wantErr(t, "Use(again)", err, store.ErrConflict)
		if stored.ID != l.ID || err == nil || !strings.Contains(err.Error(), "used already") {
			t.Errorf("Use(again) = %+v, %v", stored, err)
		}
		if _, err := links.Create(ctx, store.SignInLink{TokenHash: tokenHash("l2"), UserID: u.ID, ExpiresAt: time.Now().Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		_, err = links.Use(ctx, tokenHash("l2"), time.Now().Add(time.Hour))
		wantErr(t, "Use(expired)", err, store.ErrConflict)
		if err == nil || !strings.Contains(err.Error(), "expired") {
			t.Errorf("Use(expired) = %v, want 'expired'", err)
		}
		_, err = links.Use(ctx, tokenHash("never"), time.Now())
		wantErr(t, "Use(unknown)", err, store.ErrNotFound)
		_, err = links.Create(ctx, store.SignInLink{TokenHash: tokenHash("l3"), UserID: store.NewID(), ExpiresAt: time.Now().Add(time.Hour)})
		wantErr(t, "Create(unknown user)", err, store.ErrNotFound)
		_, err = links.Create(ctx, store.SignInLink{TokenHash: []byte("l4"), UserID: u.ID, ExpiresAt: time.Now().Add(time.Hour)})
		wantErr(t, "Create(token in clear)", err, store.ErrInvalid)
	})
}

func testWorkspaceRenameDelete(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("RenameDelete", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		u := mustUser(t, st, "u@example.com")
		mustMember(t, st, a, u, store.RoleOwner)
		mustMember(t, st, b, u, store.RoleOwner)
		if _, err := st.APIKeys().Create(ctx, store.APIKey{WorkspaceID: a.ID, Name: "k", Prefix: "ac_k", Hash: keyHash("k")}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Invitations().Create(ctx, store.Invitation{TokenHash: tokenHash("i"), WorkspaceID: a.ID, Role: store.RoleGuest,
			CreatedBy: "cli", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}

		got, err := st.Workspaces().Rename(ctx, a.ID, "alpha")
		if err != nil || got.Name != "alpha" || got.ID != a.ID || !got.CreatedAt.Equal(a.CreatedAt) {
			t.Fatalf("Rename = %+v, %v", got, err)
		}
		if w, _ := st.Workspaces().GetByName(ctx, "alpha"); w.ID != a.ID {
			t.Errorf("GetByName(new name) = %+v", w)
		}
		_, err = st.Workspaces().Rename(ctx, a.ID, "b")
		wantErr(t, "Rename(taken name)", err, store.ErrConflict)
		_, err = st.Workspaces().Rename(ctx, a.ID, "")
		wantErr(t, "Rename(empty)", err, store.ErrInvalid)
		_, err = st.Workspaces().Rename(ctx, store.NewID(), "c")
		wantErr(t, "Rename(unknown)", err, store.ErrNotFound)

		if err := st.Workspaces().Delete(ctx, a.ID); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		_, err = st.Workspaces().Get(ctx, a.ID)
		wantErr(t, "Get(deleted)", err, store.ErrNotFound)
		_, err = st.APIKeys().GetByHash(ctx, keyHash("k"))
		wantErr(t, "GetByHash(key of a deleted workspace)", err, store.ErrNotFound)
		_, err = st.Invitations().GetByHash(ctx, tokenHash("i"))
		wantErr(t, "GetByHash(invitation of a deleted workspace)", err, store.ErrNotFound)
		ms, err := st.Members().ListByUser(ctx, u.ID)
		if err != nil || len(ms) != 1 || ms[0].Workspace.ID != b.ID {
			t.Errorf("ListByUser after deleting a = %+v, %v; want only b", ms, err)
		}
		if _, err := st.Users().Get(ctx, u.ID); err != nil {
			t.Errorf("the user went with the workspace: %v", err)
		}
		wantErr(t, "Delete(again)", st.Workspaces().Delete(ctx, a.ID), store.ErrNotFound)
	})
}

func testAPIKeyRoles(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("RoleScopeUser", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		u := mustUser(t, st, "u@example.com")
		keys := st.APIKeys()
		k, err := keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Name: "default", Prefix: "ac_1", Hash: keyHash("1")})
		if err != nil || k.Role != store.RoleMember || k.Scope != "" || k.UserID != "" {
			t.Fatalf("Create(no role) = %+v, %v; want role member, no scope, no user", k, err)
		}
		k2, err := keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Name: "chat", Prefix: "ac_2", Hash: keyHash("2"),
			Role: store.RoleAdmin, Scope: store.APIKeyScopeChat, UserID: u.ID})
		if err != nil {
			t.Fatal(err)
		}
		got, err := keys.GetByHash(ctx, keyHash("2"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(k2, got); diff != "" {
			t.Errorf("GetByHash mismatch (-created +got):\n%s", diff)
		}
		list, _ := keys.List(ctx, a.ID)
		if diff := cmp.Diff([]store.APIKey{k, k2}, list); diff != "" {
			t.Errorf("List mismatch (-want +got):\n%s", diff)
		}
		_, err = keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Prefix: "ac_3", Hash: keyHash("3"), Role: "root"})
		wantErr(t, "Create(bad role)", err, store.ErrInvalid)
		_, err = keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Prefix: "ac_3", Hash: keyHash("3"), Scope: "everything"})
		wantErr(t, "Create(bad scope)", err, store.ErrInvalid)
		_, err = keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Prefix: "ac_3", Hash: keyHash("3"), UserID: store.NewID()})
		wantErr(t, "Create(unknown user)", err, store.ErrNotFound)
		if err != nil && !strings.Contains(err.Error(), "user") {
			t.Errorf("Create(unknown user) = %q, want it to name the user", err)
		}
	})
}

// KeyRolesMigrationVersion is the last migration before API keys had
// roles.
const KeyRolesMigrationVersion = 12

// KeyRolesMigration checks that migrating past KeyRolesMigrationVersion
// makes the keys that existed owners (they could do everything) while new
// keys default to member. st is at KeyRolesMigrationVersion; insertOld
// writes a key row the way that schema knew it; finish applies the rest,
// down reverts to KeyRolesMigrationVersion.
func KeyRolesMigration(t *testing.T, st store.Store, insertOld func(ctx context.Context, workspaceID, keyID string, hash []byte) error,
	finish, down func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	ws, err := st.Workspaces().GetOrCreate(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	if err := insertOld(ctx, ws.ID, "old-key", keyHash("old")); err != nil {
		t.Fatalf("insert a key at version %d: %v", KeyRolesMigrationVersion, err)
	}
	if err := finish(ctx); err != nil {
		t.Fatalf("migrating on from version %d: %v", KeyRolesMigrationVersion, err)
	}
	old, err := st.APIKeys().GetByHash(ctx, keyHash("old"))
	if err != nil || old.Role != store.RoleOwner || old.Scope != "" || old.UserID != "" {
		t.Errorf("key made before roles = %+v, %v; want an owner key, no scope, no user", old, err)
	}
	fresh, err := st.APIKeys().Create(ctx, store.APIKey{WorkspaceID: ws.ID, Name: "new", Prefix: "ac_new", Hash: keyHash("new")})
	if err != nil || fresh.Role != store.RoleMember {
		t.Errorf("key made after the migration = %+v, %v; want role member", fresh, err)
	}
	if _, err := st.Users().Create(ctx, store.User{Email: "u@example.com"}); err != nil {
		t.Errorf("users after the migration: %v", err)
	}
	if err := down(ctx); err != nil {
		t.Fatalf("migrating down to version %d: %v", KeyRolesMigrationVersion, err)
	}
	if err := finish(ctx); err != nil {
		t.Fatalf("migrating up again: %v", err)
	}
	// Up again: every key that survived the round trip is an owner.
	for _, h := range []string{"old", "new"} {
		k, err := st.APIKeys().GetByHash(ctx, keyHash(h))
		if err != nil || k.Role != store.RoleOwner {
			t.Errorf("key %s after down and up = %+v, %v; want it kept, as owner", h, k, err)
		}
	}
}
