package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
)

// maxErrorBody caps how much of an error response is read.
const maxErrorBody = 64 << 10

// response records the HTTP response of one call: its status and
// headers, and the body of an error response, so that every server's
// errors are classifiable: OpenAI's {"error":{...}}, Ollama's
// {"error":"..."}, vLLM's top-level message or a proxy's HTML page.
type response struct {
	status int // 0 until a response arrived
	header http.Header
	body   []byte // error responses only
}

// wrap turns an error of one API call into an *llm.Error whose Kind,
// Status and RetryAfter the retry middleware can judge.
func (c *Client) wrap(ctx context.Context, op string, rec *response, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return c.contextError(op, ctxErr, err)
	}
	if rec.status >= 400 {
		return c.statusError(op, rec)
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		// The HTTP client's own timeout; the caller's ctx is still live.
		return &llm.Error{Kind: llm.KindTimeout, Provider: c.name, Message: "request timed out", Err: fmt.Errorf("openai: %s: %w", op, err)}
	}
	if rec.status != 0 && op == streamOp {
		// The stream began and broke off, or sent what is not a chunk.
		return &llm.Error{Kind: llm.KindProvider, Provider: c.name, Message: "stream broke off",
			Err: fmt.Errorf("openai: %s: %w: %w", op, llm.ErrIncompleteStream, err)}
	}
	if rec.status != 0 {
		return &llm.Error{Kind: llm.KindProvider, Provider: c.name, Message: "answer could not be read",
			Err: fmt.Errorf("openai: %s: %w", op, err)}
	}
	return &llm.Error{Kind: llm.KindProvider, Provider: c.name, Message: "request failed", Err: fmt.Errorf("openai: %s: %w", op, err)}
}

// incomplete reports a stream that ended cleanly but without a
// finish_reason.
func (c *Client) incomplete(op string) error {
	return &llm.Error{Kind: llm.KindProvider, Provider: c.name, Message: "stream ended without a finish reason",
		Err: fmt.Errorf("openai: %s: %w", op, llm.ErrIncompleteStream)}
}

func (c *Client) contextError(op string, ctxErr, err error) error {
	kind, msg := llm.KindCanceled, "request canceled"
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		kind, msg = llm.KindTimeout, "request timed out"
	}
	wrapped := fmt.Errorf("openai: %s: %w", op, err)
	if !errors.Is(err, ctxErr) {
		wrapped = fmt.Errorf("openai: %s: %w: %w", op, ctxErr, err)
	}
	return &llm.Error{Kind: kind, Provider: c.name, Message: msg, Err: wrapped}
}

// statusError maps an HTTP error status.
func (c *Client) statusError(op string, rec *response) error {
	msg, _, _ := errorDetails(rec.body)
	cause := fmt.Errorf("openai: %s: status %d", op, rec.status)
	if msg == "" {
		msg = http.StatusText(rec.status)
		if snippet := bodySnippet(rec.body); snippet != "" {
			cause = fmt.Errorf("openai: %s: status %d: body %q", op, rec.status, snippet)
		}
	}
	return &llm.Error{
		Kind:       llm.KindForStatus(rec.status),
		Provider:   c.name,
		Status:     rec.status,
		RetryAfter: llm.RetryAfter(rec.header, time.Now()),
		Message:    msg,
		Err:        cause,
	}
}

// streamError maps an error event inside a 200 stream. Its status is
// derived from the error's code or type, so that retry policy treats it
// like the same error sent as a status.
func (c *Client) streamError(op string, data []byte) error {
	msg, typ, code := errorDetails(data)
	status := statusFor(typ, code)
	return &llm.Error{
		Kind:     llm.KindForStatus(status),
		Provider: c.name,
		Status:   status,
		Message:  cmp.Or(msg, typ, http.StatusText(status)),
		Err:      fmt.Errorf("openai: %s: error event: %s", op, bytes.TrimSpace(data)),
	}
}

// errorDetails reads the message, type and code of an error body in the
// shapes compatible servers use: OpenAI's {"error":{"message","type","code"}},
// Ollama's {"error":"..."}, vLLM's top-level {"message","type","code"} and
// FastAPI's {"detail":"..."}. A code may be a string or a number.
func errorDetails(body []byte) (msg, typ, code string) {
	type details struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var env struct {
		Error json.RawMessage `json:"error"`
		details
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &env) != nil {
		return "", "", ""
	}
	d := env.details
	if len(env.Error) > 0 {
		var s string
		if json.Unmarshal(env.Error, &s) == nil {
			return s, "", ""
		}
		d = details{}
		_ = json.Unmarshal(env.Error, &d)
	}
	if d.Message == "" && len(env.Detail) > 0 {
		var s string
		if json.Unmarshal(env.Detail, &s) == nil {
			d.Message = s
		}
	}
	code = string(d.Code)
	var s string
	if json.Unmarshal(d.Code, &s) == nil {
		code = s
	} else if code == "null" {
		code = ""
	}
	return d.Message, d.Type, code
}

// statusFor derives an HTTP status from an in-stream error's code or
// type; an unknown error is taken for a server failure.
func statusFor(typ, code string) int {
	if n, err := strconv.Atoi(code); err == nil && n >= 400 && n <= 599 {
		return n
	}
	switch {
	case code == "rate_limit_exceeded" || code == "insufficient_quota" ||
		typ == "requests" || typ == "tokens" || typ == "rate_limit_error" || typ == "insufficient_quota":
		return http.StatusTooManyRequests
	case code == "invalid_api_key" || typ == "authentication_error":
		return http.StatusUnauthorized
	case typ == "permission_error":
		return http.StatusForbidden
	case code == "model_not_found" || typ == "not_found_error":
		return http.StatusNotFound
	case typ == "invalid_request_error" || typ == "BadRequestError":
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// bodySnippet is the start of a body that is not a JSON error, for the
// error chain (never for Message: it may be a proxy's page).
func bodySnippet(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
