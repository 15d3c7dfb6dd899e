package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
)

// The people API: signing in and out, the signed-in user, workspaces,
// their members, invitations and API keys. Every route answers 503 when
// the server has no identity service (Options.Identity).
//
//	POST   /api/auth/login                      {email, password} → {csrf_token, user, expires_at} + agentcraft_session cookie
//	POST   /api/auth/logout                     ends this session
//	POST   /api/auth/logout-everywhere          ends every session of the user → {sessions}
//	GET    /api/auth/providers                  the OpenID providers → {providers: [name]}
//	GET    /api/auth/oidc/{provider}            302 to the provider (code + PKCE)
//	GET    /api/auth/oidc/{provider}/callback   the provider's redirect: signs in, 302 to /
//	GET    /auth/link/{token}                   a one-time sign-in link: signs in, 302 to /
//	GET    /auth/invite/{token}                 an invitation (the setup link is one): what it is for
//	GET    /api/invitations/{token}             the same as JSON
//	POST   /api/invitations/{token}/signup      {email, password, display_name} → signed in as a new member
//	POST   /api/invitations/{token}/accept      the signed-in user joins
//	GET    /api/me                              the user, their workspaces and roles
//	GET    /api/workspaces                      the caller's workspaces with roles
//	POST   /api/workspaces                      {name} → the caller becomes its owner
//	PATCH  /api/workspaces/{workspace}          {name}            (admin)
//	DELETE /api/workspaces/{workspace}          → 204             (owner)
//	GET    /api/workspaces/{workspace}/members
//	POST   /api/workspaces/{workspace}/members  {email, role}     (admin; owner for role owner)
//	PATCH  /api/workspaces/{workspace}/members/{user} {role}
//	DELETE /api/workspaces/{workspace}/members/{user}
//	GET    /api/workspaces/{workspace}/invitations
//	POST   /api/workspaces/{workspace}/invitations {role, email?} → {url, token, expires_at, invitation}
//	DELETE /api/workspaces/{workspace}/invitations/{id}
//	GET    /api/workspaces/{workspace}/keys
//	POST   /api/workspaces/{workspace}/keys     {name, role?, scope?} → {key (shown once), api_key}
//	DELETE /api/workspaces/{workspace}/keys/{id}
//
// {workspace} is a workspace's id or name.
func (s *Server) registerPeople() {
	pub, user := httpapi.AccessPublic, httpapi.AccessUser
	s.handleAccess("POST /api/auth/login", pub, s.needIdentity(s.login))
	s.handleAccess("POST /api/auth/logout", user, s.needIdentity(s.logout))
	s.handleAccess("POST /api/auth/logout-everywhere", user, s.needIdentity(s.logoutEverywhere))
	s.handleAccess("GET /api/auth/providers", pub, s.needIdentity(s.oidcProviders))
	s.handleAccess("GET /api/auth/oidc/{provider}", pub, s.needIdentity(s.oidcStart))
	s.handleAccess("GET /api/auth/oidc/{provider}/callback", pub, s.needIdentity(s.oidcCallback))
	s.handleAccess("GET /auth/link/{token}", pub, s.needIdentity(s.useSignInLink))
	s.handleAccess("GET /auth/invite/{token}", pub, s.needIdentity(s.invitationInfo))
	s.handleAccess("GET /api/invitations/{token}", pub, s.needIdentity(s.invitationInfo))
	s.handleAccess("POST /api/invitations/{token}/signup", pub, s.needIdentity(s.signUp))
	s.handleAccess("POST /api/invitations/{token}/accept", user, s.needIdentity(s.acceptInvitation))
	s.handleAccess("GET /api/me", user, s.needIdentity(s.me))
	s.handleAccess("GET /api/workspaces", user, s.needIdentity(s.listWorkspaces))
	s.handleAccess("POST /api/workspaces", user, s.needIdentity(s.createWorkspace))
	for _, rt := range []struct {
		pattern string
		perm    identity.Permission
		h       http.HandlerFunc
	}{
		{"PATCH /api/workspaces/{workspace}", identity.PermAdminWorkspace, s.renameWorkspace},
		{"DELETE /api/workspaces/{workspace}", identity.PermDeleteWorkspace, s.deleteWorkspace},
		{"GET /api/workspaces/{workspace}/members", identity.PermRead, s.listMembers},
		{"POST /api/workspaces/{workspace}/members", identity.PermManageMembers, s.addMember},
		{"PATCH /api/workspaces/{workspace}/members/{user}", identity.PermManageMembers, s.setMemberRole},
		{"DELETE /api/workspaces/{workspace}/members/{user}", identity.PermManageMembers, s.removeMember},
		{"GET /api/workspaces/{workspace}/invitations", identity.PermManageMembers, s.listInvitations},
		{"POST /api/workspaces/{workspace}/invitations", identity.PermManageMembers, s.invite},
		{"DELETE /api/workspaces/{workspace}/invitations/{id}", identity.PermManageMembers, s.revokeInvitation},
		{"GET /api/workspaces/{workspace}/keys", identity.PermManageKeys, s.listKeys},
		{"POST /api/workspaces/{workspace}/keys", identity.PermManageKeys, s.createKey},
		{"DELETE /api/workspaces/{workspace}/keys/{id}", identity.PermManageKeys, s.revokeKey},
	} {
		s.handle(rt.pattern, rt.perm, s.needIdentity(rt.h))
	}
}

func (s *Server) needIdentity(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Identity == nil {
			apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "identity_not_configured",
				Message: "sign-in is not configured on this server: it was started without an identity service"})
			return
		}
		h(w, r)
	}
}

// userView is a user as the API shows them: no password hash, no
// throttle state.
type userView struct {
	ID          string     `json:"id"`
	Email       string     `json:"email"`
	DisplayName string     `json:"display_name,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	LastLoginAt *time.Time `json:"last_login_at,omitempty"`
}

func viewUser(u store.User) userView {
	return userView{ID: u.ID, Email: u.Email, DisplayName: u.DisplayName, CreatedAt: u.CreatedAt, LastLoginAt: u.LastLoginAt}
}

type signInBody struct {
	CSRFToken string    `json:"csrf_token"`
	User      userView  `json:"user"`
	ExpiresAt time.Time `json:"expires_at"`
}

func client(r *http.Request) identity.Client {
	return identity.Client{RemoteAddr: r.RemoteAddr, UserAgent: r.UserAgent()}
}

// secure reports whether cookies set in answer to r must be Secure.
func (s *Server) secure(r *http.Request) bool { return r.TLS != nil || s.opts.SecureCookies }

// setSession sets the session cookie of in: HttpOnly, SameSite=Lax,
// Secure behind TLS, expiring with the session. A new token at every
// sign-in, so a cookie planted before it is worth nothing.
func (s *Server) setSession(w http.ResponseWriter, r *http.Request, in identity.SignIn) {
	http.SetCookie(w, &http.Cookie{Name: httpapi.SessionCookie, Value: in.Token, Path: "/", Expires: in.Session.ExpiresAt,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure(r)})
}

func (s *Server) clearCookie(w http.ResponseWriter, r *http.Request, name, path string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: path, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure(r)})
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	if body.Email == "" || body.Password == "" {
		apierr.Write(w, apierr.BadRequest("", "send email and password"))
		return
	}
	in, err := s.opts.Identity.Login(r.Context(), body.Email, body.Password, client(r))
	if err != nil {
		identityError(w, err)
		return
	}
	s.setSession(w, r, in)
	httpapi.WriteJSON(w, http.StatusOK, signInBody{CSRFToken: in.CSRFToken, User: viewUser(in.User), ExpiresAt: in.Session.ExpiresAt})
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(httpapi.SessionCookie)
	if err != nil || c.Value == "" {
		apierr.Write(w, apierr.BadRequest("", "sign-out ends a browser session: this call carries none (an API key is revoked instead)"))
		return
	}
	if err := s.opts.Identity.Logout(r.Context(), c.Value); err != nil {
		identityError(w, err)
		return
	}
	s.clearCookie(w, r, httpapi.SessionCookie, "/")
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) logoutEverywhere(w http.ResponseWriter, r *http.Request) {
	pr, _ := platform.PrincipalFrom(r.Context())
	n, err := s.opts.Identity.LogoutEverywhere(r.Context(), pr.UserID)
	if err != nil {
		identityError(w, err)
		return
	}
	s.clearCookie(w, r, httpapi.SessionCookie, "/")
	httpapi.WriteJSON(w, http.StatusOK, map[string]int{"sessions": n})
}

// oidcCookie carries the sealed state of an OpenID sign-in from its start
// to its callback.
const (
	oidcCookie     = "agentcraft_oidc"
	oidcCookiePath = "/api/auth/oidc/"
)

func (s *Server) oidcProviders(w http.ResponseWriter, r *http.Request) {
	names := []string{}
	if s.opts.OIDC != nil {
		names = append(names, s.opts.OIDC.Providers()...)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string][]string{"providers": names})
}

func (s *Server) oidcStart(w http.ResponseWriter, r *http.Request) {
	if s.opts.OIDC == nil {
		apierr.Write(w, apierr.NotFound("unknown_provider", "no OpenID provider is configured (auth.oidc in agentcraft.yaml)"))
		return
	}
	start, err := s.opts.OIDC.AuthURL(r.Context(), r.PathValue("provider"))
	if err != nil {
		identityError(w, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: start.Cookie, Path: oidcCookiePath, Expires: start.ExpiresAt,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secure(r)})
	http.Redirect(w, r, start.URL, http.StatusFound)
}

func (s *Server) oidcCallback(w http.ResponseWriter, r *http.Request) {
	if s.opts.OIDC == nil {
		apierr.Write(w, apierr.NotFound("unknown_provider", "no OpenID provider is configured (auth.oidc in agentcraft.yaml)"))
		return
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		apierr.Write(w, &apierr.Error{Status: http.StatusUnauthorized, Type: apierr.TypeAuthentication, Code: "oidc_refused",
			Message: "the OpenID provider refused the sign-in: " + e + " " + q.Get("error_description")})
		return
	}
	var flow string
	if c, err := r.Cookie(oidcCookie); err == nil {
		flow = c.Value
	}
	in, err := s.opts.OIDC.Exchange(r.Context(), r.PathValue("provider"), q.Get("code"), q.Get("state"), flow, client(r))
	s.clearCookie(w, r, oidcCookie, oidcCookiePath)
	if err != nil {
		identityError(w, err)
		return
	}
	s.setSession(w, r, in)
	http.Redirect(w, r, "/", http.StatusFound)
}

func (s *Server) useSignInLink(w http.ResponseWriter, r *http.Request) {
	in, err := s.opts.Identity.UseSignInLink(r.Context(), r.PathValue("token"), client(r))
	if err != nil {
		identityError(w, err)
		return
	}
	s.setSession(w, r, in)
	http.Redirect(w, r, "/", http.StatusFound)
}

type invitationView struct {
	Workspace string         `json:"workspace"`
	Role      identity.Role  `json:"role"`
	Email     string         `json:"email,omitempty"`
	ExpiresAt time.Time      `json:"expires_at"`
	Next      map[string]any `json:"next"`
}

// invitationInfo says what an invitation is for and how to take it up
// (the studio's page does it in a browser).
func (s *Server) invitationInfo(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	inv, ws, err := s.opts.Identity.InvitationInfo(r.Context(), token)
	if err != nil {
		identityError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, invitationView{Workspace: ws.Name, Role: inv.Role, Email: inv.Email, ExpiresAt: inv.ExpiresAt,
		Next: map[string]any{
			"sign_up": "POST /api/invitations/" + token + "/signup {email, password, display_name}",
			"accept":  "POST /api/invitations/" + token + "/accept (signed in)",
		}})
}

func (s *Server) signUp(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Email       string `json:"email"`
		Password    string `json:"password"`
		DisplayName string `json:"display_name"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	in, err := s.opts.Identity.SignUp(r.Context(), r.PathValue("token"),
		identity.NewUser{Email: body.Email, Password: body.Password, DisplayName: body.DisplayName}, client(r))
	if err != nil {
		identityError(w, err)
		return
	}
	s.setSession(w, r, in)
	httpapi.WriteJSON(w, http.StatusCreated, signInBody{CSRFToken: in.CSRFToken, User: viewUser(in.User), ExpiresAt: in.Session.ExpiresAt})
}

func (s *Server) acceptInvitation(w http.ResponseWriter, r *http.Request) {
	pr, _ := platform.PrincipalFrom(r.Context())
	m, err := s.opts.Identity.AcceptInvitation(r.Context(), r.PathValue("token"), pr.UserID)
	if err != nil {
		identityError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, m)
}

type workspaceView struct {
	ID   string        `json:"id"`
	Name string        `json:"name"`
	Role identity.Role `json:"role"`
	// Permissions are what Role allows (identity.PermissionsOf), so a
	// client shows the controls a member may use without its own copy of
	// the role table.
	Permissions []identity.Permission `json:"permissions"`
}

func (s *Server) workspacesOf(w http.ResponseWriter, r *http.Request, userID string) ([]workspaceView, bool) {
	ms, err := s.opts.Identity.Memberships(r.Context(), userID)
	if err != nil {
		identityError(w, err)
		return nil, false
	}
	out := make([]workspaceView, 0, len(ms))
	for _, m := range ms {
		out = append(out, workspaceView{ID: m.Workspace.ID, Name: m.Workspace.Name, Role: m.Role, Permissions: identity.PermissionsOf(m.Role)})
	}
	return out, true
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) {
	pr, _ := platform.PrincipalFrom(r.Context())
	u, err := s.opts.Identity.User(r.Context(), pr.UserID)
	if err != nil {
		identityError(w, err)
		return
	}
	wss, ok := s.workspacesOf(w, r, pr.UserID)
	if !ok {
		return
	}
	via := "session"
	if pr.APIKeyID != "" {
		via = "api_key"
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"user": viewUser(u), "workspaces": wss, "via": via})
}

func (s *Server) listWorkspaces(w http.ResponseWriter, r *http.Request) {
	pr, _ := platform.PrincipalFrom(r.Context())
	if wss, ok := s.workspacesOf(w, r, pr.UserID); ok {
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"workspaces": wss})
	}
}

// actor is the caller of r as the identity service's Actor.
func actor(r *http.Request) identity.Actor {
	pr, _ := platform.PrincipalFrom(r.Context())
	g := identity.Grant{Role: pr.Role, Scope: pr.Scope}
	switch {
	case pr.APIKeyID != "":
		return identity.Actor{ID: audit.APIKeyActor(pr.APIKeyID), UserID: pr.UserID, Grant: g}
	case pr.UserID != "":
		return identity.Actor{ID: identity.UserActorID(pr.UserID), UserID: pr.UserID, Grant: g}
	}
	return identity.Actor{ID: "system:no-auth", Grant: g}
}

func (s *Server) createWorkspace(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name string `json:"name"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	a := actor(r)
	a.Grant = identity.Grant{}
	ws, err := s.opts.Identity.CreateWorkspace(r.Context(), a, body.Name)
	if err != nil {
		identityError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, workspaceView{ID: ws.ID, Name: ws.Name, Role: identity.RoleOwner})
}

func (s *Server) renameWorkspace(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name string `json:"name"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	ws, err := s.opts.Identity.RenameWorkspace(r.Context(), actor(r), workspace(r), body.Name)
	if err != nil {
		identityError(w, err)
		return
	}
	pr, _ := platform.PrincipalFrom(r.Context())
	httpapi.WriteJSON(w, http.StatusOK, workspaceView{ID: ws.ID, Name: ws.Name, Role: pr.Role})
}

func (s *Server) deleteWorkspace(w http.ResponseWriter, r *http.Request) {
	if workspace(r) == s.p.DefaultWorkspace().ID {
		apierr.Write(w, &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "default_workspace",
			Message: "the default workspace cannot be deleted: the server serves it when no workspace is named"})
		return
	}
	if err := s.opts.Identity.DeleteWorkspace(r.Context(), actor(r), workspace(r)); err != nil {
		identityError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listMembers(w http.ResponseWriter, r *http.Request) {
	ms, err := s.opts.Identity.Members(r.Context(), actor(r), workspace(r))
	if err != nil {
		identityError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"members": ms})
}

func (s *Server) addMember(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Email string        `json:"email"`
		Role  identity.Role `json:"role"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	u, err := s.opts.Identity.UserByEmail(r.Context(), body.Email)
	if errors.Is(err, store.ErrNotFound) {
		apierr.Write(w, apierr.NotFound("unknown_user", "no user has that e-mail address: invite them instead (POST .../invitations)"))
		return
	}
	if err != nil {
		identityError(w, err)
		return
	}
	m, err := s.opts.Identity.AddMember(r.Context(), actor(r), workspace(r), u.ID, body.Role)
	if err != nil {
		identityError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, m)
}

func (s *Server) setMemberRole(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Role identity.Role `json:"role"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	m, err := s.opts.Identity.SetRole(r.Context(), actor(r), workspace(r), r.PathValue("user"), body.Role)
	if err != nil {
		identityError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, m)
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Identity.RemoveMember(r.Context(), actor(r), workspace(r), r.PathValue("user")); err != nil {
		identityError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listInvitations(w http.ResponseWriter, r *http.Request) {
	invs, err := s.opts.Identity.Invitations(r.Context(), actor(r), workspace(r))
	if err != nil {
		identityError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"invitations": invs})
}

func (s *Server) invite(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Role  identity.Role `json:"role"`
		Email string        `json:"email"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	if body.Role == "" {
		body.Role = identity.RoleMember
	}
	inv, err := s.opts.Identity.Invite(r.Context(), actor(r), workspace(r), body.Role, body.Email)
	if err != nil {
		identityError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"path": inv.Path, "token": inv.Token, "expires_at": inv.ExpiresAt, "invitation": inv.Invitation})
}

func (s *Server) revokeInvitation(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Identity.RevokeInvitation(r.Context(), actor(r), workspace(r), r.PathValue("id")); err != nil {
		identityError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) {
	ks, err := s.opts.Identity.APIKeys(r.Context(), actor(r), workspace(r))
	if err != nil {
		identityError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"api_keys": ks})
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name  string        `json:"name"`
		Role  identity.Role `json:"role"`
		Scope string        `json:"scope"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	a := actor(r)
	if a.Scope != "" {
		// A narrowed key makes no key wider than itself.
		body.Scope = a.Scope
	}
	token, k, err := s.opts.Identity.CreateAPIKey(r.Context(), a, workspace(r), identity.NewAPIKey{Name: body.Name, Role: body.Role, Scope: body.Scope})
	if err != nil {
		identityError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"key": token, "api_key": k})
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Identity.RevokeAPIKey(r.Context(), actor(r), workspace(r), r.PathValue("id")); err != nil {
		identityError(w, err)
		return
	}
	// The key's next request is refused, not served from the cache of
	// checked keys for up to KeyTTL: the studio says "revoked" at once.
	s.auth.ForgetKey(r.PathValue("id"))
	w.WriteHeader(http.StatusNoContent)
}

// identityError maps the identity service's refusals, then falls back to
// storeError.
func identityError(w http.ResponseWriter, err error) {
	// The service's errors start with its name, sometimes twice (a
	// wrapped sentinel); a client reads the sentence.
	msg := func() string { return strings.ReplaceAll(err.Error(), "identity: ", "") }
	var te *identity.ThrottleError
	var pe *identity.PermissionError
	switch {
	case errors.As(err, &te):
		w.Header().Set("Retry-After", strconv.Itoa(int(te.RetryAfter()/time.Second)))
		apierr.Write(w, &apierr.Error{Status: http.StatusTooManyRequests, Type: apierr.TypeAuthentication, Code: "sign_in_throttled", Message: msg()})
	case errors.Is(err, identity.ErrBadCredentials):
		apierr.Write(w, &apierr.Error{Status: http.StatusUnauthorized, Type: apierr.TypeAuthentication, Code: "invalid_credentials", Message: msg()})
	case errors.Is(err, identity.ErrUnauthenticated), errors.Is(err, identity.ErrOIDC):
		apierr.Write(w, &apierr.Error{Status: http.StatusUnauthorized, Type: apierr.TypeAuthentication, Code: "sign_in_refused", Message: msg()})
	case errors.Is(err, identity.ErrDisabled):
		apierr.Write(w, &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypePermission, Code: "account_disabled", Message: msg()})
	case errors.As(err, &pe):
		apierr.Write(w, &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypePermission, Code: "permission_denied", Param: string(pe.Permission), Message: msg()})
	case errors.Is(err, identity.ErrForbidden), errors.Is(err, identity.ErrWrongInvitee):
		apierr.Write(w, &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypePermission, Code: "forbidden", Message: msg()})
	case errors.Is(err, identity.ErrNotMember):
		apierr.Write(w, apierr.NotFound("not_a_member", msg()))
	case errors.Is(err, identity.ErrLinkUsed), errors.Is(err, identity.ErrLinkExpired):
		apierr.Write(w, &apierr.Error{Status: http.StatusGone, Type: apierr.TypeInvalidRequest, Code: "link_gone", Message: msg()})
	case errors.Is(err, identity.ErrUnknownLink):
		apierr.Write(w, apierr.NotFound("unknown_link", msg()))
	case errors.Is(err, identity.ErrPasswordTooShort), errors.Is(err, identity.ErrPasswordTooLong):
		apierr.Write(w, apierr.BadRequest("password", msg()))
	default:
		storeError(w, err)
	}
}
