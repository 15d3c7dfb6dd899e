// Package httpapi is the HTTP plumbing AgentCraft's API surfaces share:
// authentication by API key or browser session and the per-route
// permission check (Authenticator, Route), JSON answers (WriteJSON), strict
// JSON bodies (DecodeBody), bearer-header parsing and Mount, the way a
// surface package (server/mcpserver, server/a2aserver) hands its routes to
// the server that serves them. Errors become HTTP answers in
// server/apierr, which this package uses.
//
// It imports no surface, so that every surface can import it without an
// import circle:
//
//	auth := httpapi.NewAuthenticator(p, &httpapi.AuthOptions{Mode: httpapi.AuthAPIKey})
//	defer auth.Stop()
//	mux.Handle("/api/", auth.Authenticate(api))
package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/strictjson"
	"github.com/agentcraftlab/agentcraft/server/apierr"
)

// Mount is a handler served beside the API, at Pattern in http.ServeMux
// syntax ("/a2a/", "GET /.well-known/jwks.json").
type Mount struct {
	Pattern string
	Handler http.Handler
	// Permission, when set, puts the handler behind the authentication of
	// /v1 and /api (an API key or a browser session) and needs that
	// permission in the caller's workspace; the handler reads the caller
	// from platform.PrincipalFrom. Without it the handler authenticates
	// its callers itself.
	Permission identity.Permission
}

// WriteJSON answers with status and v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// DecodeBody reads a JSON object of at most maxBytes into v, refusing
// unknown fields so that a misspelt field is an error rather than silently
// ignored. On failure it has answered with the error and returns false.
func DecodeBody(w http.ResponseWriter, r *http.Request, maxBytes int64, v any) bool {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		err = dec.Decode(v)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		var unknown *strictjson.UnknownFieldError
		switch {
		case errors.As(err, &mbe):
			apierr.Write(w, &apierr.Error{Status: http.StatusRequestEntityTooLarge, Type: apierr.TypeInvalidRequest, Code: "request_too_large", Message: "request body is too large"})
		case errors.Is(err, io.EOF):
			apierr.Write(w, apierr.BadRequest("", "request body is empty: send a JSON object"))
		case errors.As(strictjson.Check(data, v, ""), &unknown):
			// An unknown key is named by its path
			// (middleware.guard.rules[0].nme), not only its name.
			apierr.Write(w, apierr.BadRequest(unknown.Path, "request body is not valid: "+unknown.Error()))
		default:
			apierr.Write(w, apierr.BadRequest("", "request body is not valid: "+err.Error()))
		}
		return false
	}
	return true
}

// Bearer returns the token of an Authorization header value
// "Bearer <token>" (the scheme in any case), and false when h is not one.
func Bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
