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
	"maps"
	"net/http"
	"reflect"
	"slices"
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
			field, msg := failingField(data, v, err), err.Error()
			if field != "" && !strings.Contains(msg, field) {
				msg = field + ": " + msg
			}
			apierr.Write(w, apierr.BadRequest(field, "request body is not valid: "+msg))
		}
		return false
	}
	return true
}

// failingField names the key of the JSON object data whose value v's type
// refuses: encoding/json names it for a value of the wrong JSON type, but
// not for an error of a field's own UnmarshalJSON (a negative amount of
// money, an unknown enum value), so then each top-level key is decoded
// alone into a fresh value of v's type and the first that fails is it.
// It is "" when no single key fails (the body is not an object, say).
func failingField(data []byte, v any, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		one, err := json.Marshal(map[string]json.RawMessage{k: obj[k]})
		if err != nil {
			continue
		}
		if json.Unmarshal(one, reflect.New(t.Elem()).Interface()) != nil {
			return k
		}
	}
	return ""
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
