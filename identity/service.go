// Package identity is who may do what: users and how they sign in (an
// e-mail address and password, OpenID Connect, one-time links), browser
// sessions, workspace members with their roles, invitations, and the one
// rule of permissions, Allows(role, permission), that every surface
// applies.
//
// A Service works on a store.Store:
//
//	ids, err := identity.New(st, &identity.Options{Audit: p.RecordAudit})
//	in, err := ids.Login(ctx, email, password, identity.Client{RemoteAddr: r.RemoteAddr})
//	// set in.Token as the session cookie, hand in.CSRFToken to the page
//	auth, err := ids.Authenticate(ctx, cookie.Value) // every request
//	grant, err := ids.GrantOf(ctx, workspaceID, auth.User.ID)
//	if err := grant.Check(identity.PermManageTools); err != nil { ... 403 ... }
//
// Identity is an argument: the methods that change a workspace take the
// Actor asking, whose Grant in that workspace the caller has resolved
// (GrantOf for a user, KeyActor for an API key, CLI on the command line).
//
// Sign-in is throttled per account in the database (five wrong passwords
// within a minute lock the account for a minute, doubling with each lock
// in a row up to an hour), so every process agrees, and per remote
// address in memory. A locked account is refused before the password is
// hashed; an unknown address is hashed against a dummy, so that a
// refusal takes as long whether the account exists or not.
package identity

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/store"
)

// Paths of the links the service makes, relative to the server's address;
// the HTTP surface serves them.
const (
	// SignInLinkPath + token signs the link's user in once.
	SignInLinkPath = "/auth/link/"
	// InvitationPath + token joins a workspace (signing up when needed);
	// the setup link of a fresh install is one.
	InvitationPath = "/auth/invite/"
)

// Errors of the service. Test with errors.Is.
var (
	// ErrBadCredentials refuses a sign-in: the address or the password
	// is wrong (which, is not said).
	ErrBadCredentials = errors.New("identity: wrong e-mail address or password")
	// ErrThrottled is wrapped by *ThrottleError (HTTP 429).
	ErrThrottled = errors.New("identity: too many failed sign-ins")
	// ErrDisabled refuses a user whose account is disabled.
	ErrDisabled = errors.New("identity: the account is disabled; ask an administrator")
	// ErrUnauthenticated means no valid session: unknown, signed out or
	// expired (HTTP 401).
	ErrUnauthenticated = errors.New("identity: not signed in, or the session has expired; sign in again")
	// ErrNotMember means the user has no role in the workspace.
	ErrNotMember = errors.New("identity: not a member of this workspace")
	// ErrLinkUsed and ErrLinkExpired refuse an invitation or sign-in link.
	ErrLinkUsed    = errors.New("identity: this link was used already; ask for a new one")
	ErrLinkExpired = errors.New("identity: this link has expired; ask for a new one")
	// ErrUnknownLink refuses a token that names no invitation or link.
	ErrUnknownLink = errors.New("identity: this link is not valid; check that it was copied whole")
	// ErrWrongInvitee refuses an invitation made for another address.
	ErrWrongInvitee = errors.New("identity: this invitation is for another e-mail address")
)

// ThrottleError refuses a sign-in until Until.
type ThrottleError struct {
	Until time.Time
	// Account is true when the account is locked, false when the remote
	// address has failed too often.
	Account bool
	now     time.Time
}

// RetryAfter is how long to wait, rounded up to a second (Retry-After).
func (e *ThrottleError) RetryAfter() time.Duration {
	return max(time.Second, e.Until.Sub(e.now).Truncate(time.Second)+time.Second)
}

func (e *ThrottleError) Error() string {
	who := "from this address"
	if e.Account {
		who = "for this account; it is locked"
	}
	return fmt.Sprintf("identity: too many failed sign-ins %s until %s UTC; try again in %s",
		who, e.Until.UTC().Format("2006-01-02 15:04:05"), e.RetryAfter())
}

// Is makes errors.Is(err, ErrThrottled) hold.
func (e *ThrottleError) Is(target error) bool { return target == ErrThrottled }

// Options configure a Service. The zero value (or nil) is the default.
type Options struct {
	// Hasher hashes passwords. Default DefaultArgon2id.
	Hasher Hasher
	// MaxConcurrentHashes bounds the password hashes computed at once
	// (each takes the Hasher's memory, 19 MiB by default), so a flood of
	// sign-ins queues instead of exhausting memory. Default
	// max(2, GOMAXPROCS).
	MaxConcurrentHashes int
	// IdleTimeout ends a session unused for that long. Default 12 h.
	IdleTimeout time.Duration
	// AbsoluteTimeout ends every session that long after sign-in.
	// Default 7 days.
	AbsoluteTimeout time.Duration
	// TouchInterval is how often a session in use records it (last seen,
	// idle expiry), to keep writes down. Default 1 minute.
	TouchInterval time.Duration
	// MaxFailures wrong passwords within FailureWindow lock the account
	// for LockDuration, doubled for each lock in a row since the last
	// good sign-in, at most MaxLockDuration. Defaults 5, 1 minute,
	// 1 minute, 1 hour.
	MaxFailures     int
	FailureWindow   time.Duration
	LockDuration    time.Duration
	MaxLockDuration time.Duration
	// AddressFailures failed sign-ins from one remote address are
	// allowed in a burst, then one more per AddressInterval. Defaults 20
	// and 6 s (10 a minute).
	AddressFailures int
	AddressInterval time.Duration
	// InvitationTTL, SignInLinkTTL and SetupLinkTTL are how long the
	// links last. Defaults 7 days, 24 h, 24 h.
	InvitationTTL time.Duration
	SignInLinkTTL time.Duration
	SetupLinkTTL  time.Duration
	// Audit records sign-ins, failed sign-ins, lockouts, role changes,
	// members, invitations, sign-out everywhere and key creation; pass
	// platform.Platform.RecordAudit. Default: nothing is recorded.
	Audit func(context.Context, store.AuditEvent)
	// AuditWorkspaceID names the workspace whose audit log also holds the
	// account events (sign-ins, failures, lockouts), which otherwise go
	// to each workspace the user belongs to; failed sign-ins for unknown
	// addresses are recorded only there. Default: none.
	AuditWorkspaceID string
	// BeforeWorkspaceDelete runs before DeleteWorkspace deletes the rows,
	// to drop what the store does not hold (search indexes); an error
	// stops the delete. Default none.
	BeforeWorkspaceDelete func(ctx context.Context, workspaceID string) error
	// Logger receives failures of background writes (session touches).
	// Default: discard.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Service is the identity service. It is safe for concurrent use.
type Service struct {
	st store.Store
	o  Options
	// dummy hashes a random password once, on the first sign-in (not in
	// New: argon2id's 19 MiB and tens of milliseconds are start-up cost
	// for a server nobody signs in to): the cost of an unknown address.
	dummy func() (string, error)
	sem   chan struct{} // one slot per concurrent password hash
	addrs *addressLimiter
}

// New returns a Service over st.
func New(st store.Store, opts *Options) (*Service, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Hasher == nil {
		o.Hasher = DefaultArgon2id
	}
	o.MaxConcurrentHashes = cmp.Or(o.MaxConcurrentHashes, max(2, runtime.GOMAXPROCS(0)))
	o.IdleTimeout = cmp.Or(o.IdleTimeout, 12*time.Hour)
	o.AbsoluteTimeout = cmp.Or(o.AbsoluteTimeout, 7*24*time.Hour)
	o.TouchInterval = cmp.Or(o.TouchInterval, time.Minute)
	o.MaxFailures = cmp.Or(o.MaxFailures, 5)
	o.FailureWindow = cmp.Or(o.FailureWindow, time.Minute)
	o.LockDuration = cmp.Or(o.LockDuration, time.Minute)
	o.MaxLockDuration = cmp.Or(o.MaxLockDuration, time.Hour)
	o.AddressFailures = cmp.Or(o.AddressFailures, 20)
	o.AddressInterval = cmp.Or(o.AddressInterval, 6*time.Second)
	o.InvitationTTL = cmp.Or(o.InvitationTTL, 7*24*time.Hour)
	o.SignInLinkTTL = cmp.Or(o.SignInLinkTTL, 24*time.Hour)
	o.SetupLinkTTL = cmp.Or(o.SetupLinkTTL, 24*time.Hour)
	if o.Audit == nil {
		o.Audit = func(context.Context, store.AuditEvent) {}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	for name, d := range map[string]time.Duration{"IdleTimeout": o.IdleTimeout, "AbsoluteTimeout": o.AbsoluteTimeout,
		"TouchInterval": o.TouchInterval, "FailureWindow": o.FailureWindow, "LockDuration": o.LockDuration,
		"MaxLockDuration": o.MaxLockDuration, "AddressInterval": o.AddressInterval, "InvitationTTL": o.InvitationTTL,
		"SignInLinkTTL": o.SignInLinkTTL, "SetupLinkTTL": o.SetupLinkTTL} {
		if d < 0 {
			return nil, fmt.Errorf("identity: Options.%s is %v; set a positive duration or 0 for the default", name, d)
		}
	}
	if o.MaxFailures < 0 || o.AddressFailures < 0 || o.MaxConcurrentHashes < 0 {
		return nil, errors.New("identity: Options.MaxFailures, AddressFailures and MaxConcurrentHashes must not be negative")
	}
	s := &Service{st: st, o: o, sem: make(chan struct{}, o.MaxConcurrentHashes),
		addrs: newAddressLimiter(rate.Every(o.AddressInterval), o.AddressFailures)}
	s.dummy = sync.OnceValues(func() (string, error) { return o.Hasher.Hash(randomToken()) })
	return s, nil
}

func (s *Service) now() time.Time { return s.o.Now() }

// hash and verify run the Hasher within the concurrency bound.
func (s *Service) hash(ctx context.Context, password string) (string, error) {
	if err := s.acquire(ctx); err != nil {
		return "", err
	}
	defer func() { <-s.sem }()
	return s.o.Hasher.Hash(password)
}

func (s *Service) verify(ctx context.Context, password, encoded string) (ok, rehash bool, err error) {
	if err := s.acquire(ctx); err != nil {
		return false, false, err
	}
	defer func() { <-s.sem }()
	return s.o.Hasher.Verify(password, encoded)
}

func (s *Service) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("identity: waiting to hash a password: %w", context.Cause(ctx))
	}
}

// randomToken returns 32 random bytes, base64url: session tokens, CSRF
// tokens, link tokens.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // fails only when crypto/rand does, which is fatal
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// HashToken is the SHA-256 a token is stored as.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// emailDigest names an address in audit details without holding it: the
// first 12 hex digits of its normalized SHA-256.
func emailDigest(email string) string {
	h := sha256.Sum256([]byte(store.NormalizeEmail(email)))
	return hex.EncodeToString(h[:6])
}

// CheckCSRF reports whether sent is the session's CSRF token, in constant
// time. Cookie-authenticated POST, PUT, PATCH and DELETE must send it.
func CheckCSRF(sess store.Session, sent string) bool {
	return sent != "" && subtle.ConstantTimeCompare([]byte(sess.CSRFToken), []byte(sent)) == 1
}

// UserActorID is how the audit log names a user.
func UserActorID(userID string) string { return "user:" + userID }

// record hands a workspace event to the audit sink.
func (s *Service) record(ctx context.Context, actor, workspaceID, action, target string, details map[string]any) {
	s.o.Audit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Actor: actor, Action: action, Target: target,
		Details: audit.Details(details), CreatedAt: s.now()})
}

// recordAccount records an event of an account, which belongs to no
// workspace: in each of the user's workspaces and in AuditWorkspaceID.
func (s *Service) recordAccount(ctx context.Context, actor, userID, action string, details map[string]any) {
	seen := map[string]bool{}
	if userID != "" {
		ms, err := s.st.Members().ListByUser(ctx, userID)
		if err != nil {
			s.o.Logger.Warn("audit_account_event_workspaces", "action", action, "err", err)
		}
		for _, m := range ms {
			seen[m.Workspace.ID] = true
			s.record(ctx, actor, m.Workspace.ID, action, "user:"+userID, details)
		}
	}
	if ws := s.o.AuditWorkspaceID; ws != "" && !seen[ws] {
		target := ""
		if userID != "" {
			target = "user:" + userID
		}
		s.record(ctx, actor, ws, action, target, details)
	}
}
