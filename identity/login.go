package identity

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/agentcraftlab/agentcraft/store"
)

// Client is what a request says about the browser signing in; both fields
// are optional and informative (kept on the session, cut to its limits).
type Client struct {
	RemoteAddr string
	UserAgent  string
}

// SignIn is a new session: Token goes into the session cookie (it is
// stored only as its hash), CSRFToken to the page, which sends it back as
// X-CSRF-Token on every write.
type SignIn struct {
	Token     string
	CSRFToken string
	Session   store.Session
	User      store.User
}

// Auth is a request's valid session and its user.
type Auth struct {
	Session store.Session
	User    store.User
}

// Login signs a user in with an e-mail address and password and returns a
// new session (a new id at every sign-in, so a session planted before
// sign-in is worth nothing). Refusals: ErrBadCredentials (unknown address
// or wrong password, alike), *ThrottleError (the account is locked, or
// the address failed too often: refused before the password is hashed),
// ErrDisabled (after a correct password only, so it tells nothing to a
// guesser).
func (s *Service) Login(ctx context.Context, email, password string, from Client) (SignIn, error) {
	now := s.now()
	addr := addressKey(from.RemoteAddr)
	if until, ok := s.addrs.blocked(addr, now); ok {
		return SignIn{}, &ThrottleError{Until: until, now: now}
	}
	// Every sign-in takes the dummy, so that the first one of the process,
	// which hashes it, says nothing about the address either.
	dummy, err := s.dummy()
	if err != nil {
		return SignIn{}, fmt.Errorf("identity: sign in: %w", err)
	}
	u, err := s.st.Users().GetByEmail(ctx, email)
	if errors.Is(err, store.ErrNotFound) {
		// As long as a wrong password: no answer tells which addresses
		// have accounts.
		if _, _, err := s.verify(ctx, password, dummy); err != nil {
			return SignIn{}, err
		}
		s.addrs.fail(addr, now)
		s.recordAccount(ctx, "anonymous", "", "auth.login_failed", map[string]any{"reason": "unknown_email", "email_sha256": emailDigest(email)})
		return SignIn{}, ErrBadCredentials
	}
	if err != nil {
		return SignIn{}, fmt.Errorf("identity: sign in: %w", err)
	}
	if u.LockedUntil != nil && u.LockedUntil.After(now) {
		return SignIn{}, &ThrottleError{Until: *u.LockedUntil, Account: true, now: now}
	}
	encoded := u.PasswordHash
	if encoded == "" {
		encoded = dummy // no password set: nothing matches, at the same cost
	}
	ok, rehash, err := s.verify(ctx, password, encoded)
	if err != nil {
		return SignIn{}, fmt.Errorf("identity: sign in user %s: %w", u.ID, err)
	}
	if !ok || u.PasswordHash == "" {
		s.addrs.fail(addr, now)
		locked, err := s.recordFailure(ctx, u, now)
		if err != nil {
			return SignIn{}, err
		}
		s.recordAccount(ctx, UserActorID(u.ID), u.ID, "auth.login_failed", map[string]any{"reason": "wrong_password"})
		if locked != nil {
			s.recordAccount(ctx, "system", u.ID, "auth.lockout", map[string]any{"until": locked.UTC().Format(time.RFC3339)})
			return SignIn{}, &ThrottleError{Until: *locked, Account: true, now: now}
		}
		return SignIn{}, ErrBadCredentials
	}
	if u.DisabledAt != nil {
		return SignIn{}, ErrDisabled
	}
	if rehash {
		if h, err := s.hash(ctx, password); err == nil {
			if _, err := s.st.Users().Update(ctx, u.ID, store.UserUpdate{PasswordHash: &h}); err != nil {
				s.o.Logger.Warn("password_rehash", "user_id", u.ID, "err", err)
			}
		}
	}
	return s.startSession(ctx, u, from, "password")
}

// recordFailure counts a wrong password in the user's LoginState and
// returns the lock's end when it locked the account. The swap retries when
// another process counted one meanwhile.
func (s *Service) recordFailure(ctx context.Context, u store.User, now time.Time) (*time.Time, error) {
	for range 20 {
		prev := u.LoginState
		next := prev
		if prev.FailedSince == nil || now.Sub(*prev.FailedSince) >= s.o.FailureWindow {
			next.FailedLogins, next.FailedSince = 1, &now
		} else {
			next.FailedLogins++
		}
		var locked *time.Time
		if next.FailedLogins >= s.o.MaxFailures {
			until := now.Add(s.lockFor(prev.Lockouts))
			next.LockedUntil, locked = &until, &until
			next.Lockouts++
			next.FailedLogins, next.FailedSince = 0, nil
		}
		err := s.st.Users().SwapLoginState(ctx, u.ID, prev, next)
		if err == nil {
			return locked, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return nil, fmt.Errorf("identity: record failed sign-in: %w", err)
		}
		if u, err = s.st.Users().Get(ctx, u.ID); err != nil {
			return nil, fmt.Errorf("identity: record failed sign-in: %w", err)
		}
	}
	return nil, fmt.Errorf("identity: record failed sign-in of user %s: the state kept changing", u.ID)
}

// lockFor is the length of the lock after n locks in a row.
func (s *Service) lockFor(n int) time.Duration {
	d := s.o.LockDuration
	for range n {
		if d >= s.o.MaxLockDuration {
			break
		}
		d *= 2
	}
	return min(d, s.o.MaxLockDuration)
}

// startSession resets the throttle, stamps the sign-in and creates a
// session for u.
func (s *Service) startSession(ctx context.Context, u store.User, from Client, method string) (SignIn, error) {
	if u.DisabledAt != nil {
		return SignIn{}, ErrDisabled
	}
	now := s.now()
	for range 20 {
		next := store.LoginState{LastLoginAt: &now}
		err := s.st.Users().SwapLoginState(ctx, u.ID, u.LoginState, next)
		if err == nil {
			u.LoginState = next
			break
		}
		if !errors.Is(err, store.ErrConflict) {
			return SignIn{}, fmt.Errorf("identity: sign in: %w", err)
		}
		if u, err = s.st.Users().Get(ctx, u.ID); err != nil {
			return SignIn{}, fmt.Errorf("identity: sign in: %w", err)
		}
	}
	token, csrf := randomToken(), randomToken()
	sess, err := s.st.Sessions().Create(ctx, store.Session{
		ID: HashToken(token), UserID: u.ID, CSRFToken: csrf,
		IdleExpiresAt: now.Add(min(s.o.IdleTimeout, s.o.AbsoluteTimeout)), ExpiresAt: now.Add(s.o.AbsoluteTimeout),
		UserAgent: from.UserAgent, RemoteAddr: from.RemoteAddr,
	})
	if err != nil {
		return SignIn{}, fmt.Errorf("identity: sign in: %w", err)
	}
	s.recordAccount(ctx, UserActorID(u.ID), u.ID, "auth.login", map[string]any{"method": method})
	return SignIn{Token: token, CSRFToken: csrf, Session: sess, User: u}, nil
}

// Authenticate returns the session whose token this is, with its user;
// ErrUnauthenticated when there is none, it has expired, or the user is
// disabled. It records use at most once per TouchInterval, which moves
// the idle expiry on (never past the absolute one).
func (s *Service) Authenticate(ctx context.Context, token string) (Auth, error) {
	if token == "" || len(token) > 200 {
		return Auth{}, ErrUnauthenticated
	}
	hash := HashToken(token)
	sess, err := s.st.Sessions().GetByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return Auth{}, ErrUnauthenticated
	}
	if err != nil {
		return Auth{}, fmt.Errorf("identity: authenticate: %w", err)
	}
	now := s.now()
	if !now.Before(sess.IdleExpiresAt) || !now.Before(sess.ExpiresAt) {
		return Auth{}, ErrUnauthenticated
	}
	u, err := s.st.Users().Get(ctx, sess.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return Auth{}, ErrUnauthenticated
	}
	if err != nil {
		return Auth{}, fmt.Errorf("identity: authenticate: %w", err)
	}
	if u.DisabledAt != nil {
		return Auth{}, fmt.Errorf("%w (%w)", ErrUnauthenticated, ErrDisabled)
	}
	if now.Sub(sess.LastSeenAt) >= s.o.TouchInterval {
		idle := now.Add(s.o.IdleTimeout)
		if err := s.st.Sessions().Touch(ctx, hash, now, idle); err != nil {
			s.o.Logger.Warn("session_touch", "user_id", u.ID, "err", err)
		} else {
			sess.LastSeenAt = store.Timestamp(now)
			sess.IdleExpiresAt = store.Timestamp(idle)
			if sess.IdleExpiresAt.After(sess.ExpiresAt) {
				sess.IdleExpiresAt = sess.ExpiresAt
			}
		}
	}
	return Auth{Session: sess, User: u}, nil
}

// Logout ends the session of token; an unknown token is no error (the
// browser is signed out either way).
func (s *Service) Logout(ctx context.Context, token string) error {
	err := s.st.Sessions().Delete(ctx, HashToken(token))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("identity: sign out: %w", err)
	}
	return nil
}

// LogoutEverywhere ends every session of the user and reports how many.
func (s *Service) LogoutEverywhere(ctx context.Context, userID string) (int, error) {
	n, err := s.st.Sessions().DeleteByUser(ctx, userID)
	if err != nil {
		return 0, fmt.Errorf("identity: sign out everywhere: %w", err)
	}
	s.recordAccount(ctx, UserActorID(userID), userID, "auth.logout_everywhere", map[string]any{"sessions": n})
	return n, nil
}

// Sessions lists the user's live sessions, newest first.
func (s *Service) Sessions(ctx context.Context, userID string) ([]store.Session, error) {
	return s.st.Sessions().ListByUser(ctx, userID)
}

// Sweep deletes expired sessions; run it now and then (hourly).
func (s *Service) Sweep(ctx context.Context) (int, error) {
	return s.st.Sessions().DeleteExpired(ctx, s.now())
}

// addressKey is the throttle's key of a remote address: its host (a
// port changes with every connection).
func addressKey(remote string) string {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
}

// addressLimiter counts failed sign-ins per remote address in this
// process: a token bucket per address, spent by failures only, so that
// people behind one address who type their passwords right are never
// slowed.
type addressLimiter struct {
	limit rate.Limit
	burst int
	// mu guards entries.
	mu      sync.Mutex
	entries map[string]*addressEntry
}

type addressEntry struct {
	lim  *rate.Limiter
	seen time.Time
}

// maxAddresses bounds the limiter's memory; past it, idle entries go.
const maxAddresses = 10000

func newAddressLimiter(limit rate.Limit, burst int) *addressLimiter {
	return &addressLimiter{limit: limit, burst: burst, entries: map[string]*addressEntry{}}
}

// blocked reports whether addr may not try now, and until when.
func (l *addressLimiter) blocked(addr string, now time.Time) (time.Time, bool) {
	if addr == "" {
		return time.Time{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[addr]
	if e == nil || e.lim.TokensAt(now) >= 1 {
		return time.Time{}, false
	}
	// One token refills in 1/limit.
	missing := 1 - e.lim.TokensAt(now)
	return now.Add(time.Duration(missing * float64(time.Second) / float64(l.limit))), true
}

// fail spends a token of addr.
func (l *addressLimiter) fail(addr string, now time.Time) {
	if addr == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[addr]
	if e == nil {
		if len(l.entries) >= maxAddresses {
			l.prune(now)
		}
		e = &addressEntry{lim: rate.NewLimiter(l.limit, l.burst)}
		l.entries[addr] = e
	}
	e.seen = now
	e.lim.AllowN(now, 1)
}

// prune drops entries whose bucket has refilled; l.mu is held.
func (l *addressLimiter) prune(now time.Time) {
	for k, e := range l.entries {
		if e.lim.TokensAt(now) >= float64(l.burst) {
			delete(l.entries, k)
		}
	}
	if len(l.entries) >= maxAddresses { // every address is failing: drop the oldest half
		cut := now
		for _, e := range l.entries {
			if e.seen.Before(cut) {
				cut = e.seen
			}
		}
		mid := cut.Add(now.Sub(cut) / 2)
		for k, e := range l.entries {
			if e.seen.Before(mid) {
				delete(l.entries, k)
			}
		}
	}
}
