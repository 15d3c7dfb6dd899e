// Package apierr is the one place where errors become HTTP answers. Every
// API surface answers failures with the same JSON shape — OpenAI's
// {"error":{"message","type","param","code"}} — so that OpenAI SDKs and
// scripts read our errors without special cases, and maps llm error kinds to
// status codes here and nowhere else.
package apierr

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/agentcraftlab/agentcraft/llm"
)

// Body is the JSON of an error answer.
type Body struct {
	Error Detail `json:"error"`
}

// Detail describes one error.
type Detail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// Error is an API error ready to be written.
type Error struct {
	Status  int
	Type    string
	Code    string
	Param   string
	Message string
	// RetryAfter, in whole seconds, is sent as the Retry-After header.
	RetryAfter int
}

func (e *Error) Error() string { return e.Message }

// Types of OpenAI's error vocabulary.
const (
	TypeInvalidRequest    = "invalid_request_error"
	TypeAuthentication    = "authentication_error"
	TypePermission        = "permission_error"
	TypeNotFound          = "not_found_error"
	TypeRateLimit         = "rate_limit_error"
	TypeInsufficientQuota = "insufficient_quota"
	TypeServer            = "server_error"
	TypeUpstream          = "upstream_error"
	TypeTimeout           = "timeout_error"
)

// BadRequest is a 400 naming the offending parameter.
func BadRequest(param, message string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: "invalid_request", Param: param, Message: message}
}

// NotFound is a 404 with the given code (such as model_not_found).
func NotFound(code, message string) *Error {
	return &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: code, Message: message}
}

// Unauthorized is a 401.
func Unauthorized(message string) *Error {
	return &Error{Status: http.StatusUnauthorized, Type: TypeAuthentication, Code: "invalid_api_key", Message: message}
}

// FromLLM maps a model error to an API error by its kind.
func FromLLM(err error) *Error {
	var e *llm.Error
	msg := err.Error()
	retryAfter := 0
	if errors.As(err, &e) {
		if e.RetryAfter > 0 {
			retryAfter = max(1, int(e.RetryAfter.Seconds()+0.999))
		}
	}
	kind := llm.KindOf(err)
	out := &Error{Status: Status(kind), Message: msg, RetryAfter: retryAfter, Code: string(kind)}
	switch kind {
	case llm.KindCaller:
		out.Type = TypeInvalidRequest
	case llm.KindRateLimit:
		out.Type = TypeRateLimit
		out.Code = "rate_limit_exceeded"
	case llm.KindPolicy:
		out.Type = TypeInvalidRequest
		out.Code = "content_policy_violation"
	case llm.KindQuota:
		// OpenAI's own type for a spent quota, which its SDKs know.
		out.Type = TypeInsufficientQuota
		out.Code = "budget_exceeded"
		if e != nil && e.Message != "" {
			out.Message = e.Message
		}
	case llm.KindTimeout:
		out.Type = TypeTimeout
	case llm.KindAuth, llm.KindNotFound, llm.KindProvider:
		out.Type = TypeUpstream
	default:
		out.Type = TypeServer
		out.Message = "internal error"
	}
	return out
}

// Status maps an llm error kind to the HTTP status the client sees. Upstream
// authentication and not-found failures are the operator's configuration
// problem, not the client's, so they are 502 rather than 401/404: an Open
// WebUI that saw 401 would tell its user that their agentcraft key is wrong.
func Status(k llm.Kind) int {
	switch k {
	case llm.KindCaller:
		return http.StatusBadRequest
	case llm.KindPolicy:
		return http.StatusBadRequest
	case llm.KindRateLimit, llm.KindQuota:
		return http.StatusTooManyRequests
	case llm.KindAuth, llm.KindNotFound, llm.KindProvider:
		return http.StatusBadGateway
	case llm.KindTimeout:
		return http.StatusGatewayTimeout
	case llm.KindCanceled:
		return 499 // client closed the request; nobody reads it
	}
	return http.StatusInternalServerError
}

// Body returns the JSON body of e.
func (e *Error) Body() Body {
	b := Body{Error: Detail{Message: e.Message, Type: e.Type}}
	if e.Param != "" {
		p := e.Param
		b.Error.Param = &p
	}
	if e.Code != "" {
		c := e.Code
		b.Error.Code = &c
	}
	return b
}

// Write sends e as the whole response.
func Write(w http.ResponseWriter, e *Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(e.Body())
}
