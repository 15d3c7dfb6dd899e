package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
)

// responseError is an error the API answered with: an HTTP status of 400
// or more, or an error event inside a 200 stream. Its text names the
// request, status, request id and body, as the SDK's did; never a header
// value, so no credential.
type responseError struct {
	Method     string
	URL        string
	StatusCode int
	RequestID  string
	// Header is the response's, for Retry-After.
	Header http.Header
	// Type and Message are error.type and error.message of a JSON body
	// {"type":"error","error":{"type":...,"message":...}}; empty when the
	// body is something else (a proxy's HTML page).
	Type    string
	Message string
	// Body is the body as received, cut to maxErrorText.
	Body []byte
}

// maxErrorBody bounds how much of an error answer is read, and
// maxErrorText how much of it goes into the error's text: a proxy's error
// page can be large, and the text ends up in logs.
const (
	maxErrorBody = 64 << 10
	maxErrorText = 2 << 10
)

func (e *responseError) Error() string {
	msg := fmt.Sprintf("%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.URL != "" {
		msg = fmt.Sprintf("%s %q: %s", e.Method, e.URL, msg)
	}
	if e.RequestID != "" {
		msg += fmt.Sprintf(" (Request-ID: %s)", e.RequestID)
	}
	if len(e.Body) > 0 {
		msg += " " + string(e.Body)
	}
	return msg
}

// parse fills Type, Message and Body from an error body.
func (e *responseError) parse(body []byte) {
	body = bytes.TrimSpace(body)
	var wire struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	// Anything else than the documented object leaves Type and Message
	// empty; the status still says what happened.
	if json.Unmarshal(body, &wire) == nil {
		e.Type, e.Message = wire.Error.Type, wire.Error.Message
	}
	if len(body) > maxErrorText {
		body = append(body[:maxErrorText:maxErrorText], "…"...)
	}
	e.Body = body
}

// readError reads the error answer res into a *responseError.
func readError(res *http.Response) *responseError {
	e := newResponseError(res)
	// A body that breaks off still leaves the status to judge by.
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	e.parse(body)
	return e
}

// streamError is the API error an error event carries; its status is the
// stream's 200, and apiError derives the real one from the error type.
func streamError(res *http.Response, data []byte) error {
	e := newResponseError(res)
	e.parse(data)
	return e
}

// newResponseError holds what the response says about itself: status,
// request id, headers, and the request it answers.
func newResponseError(res *http.Response) *responseError {
	e := &responseError{StatusCode: res.StatusCode, RequestID: res.Header.Get("Request-Id"), Header: res.Header}
	if res.Request != nil {
		e.Method, e.URL = res.Request.Method, res.Request.URL.String()
	}
	return e
}

// wrap turns an error of one API call into an *llm.Error whose Kind,
// Status and RetryAfter the retry middleware can judge.
func (c *Client) wrap(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return c.contextError(op, ctxErr, err)
	}
	var apiErr *responseError
	if errors.As(err, &apiErr) {
		return c.apiError(op, apiErr)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// Options.Timeout fired; the caller's ctx is still live.
		return &llm.Error{Kind: llm.KindTimeout, Provider: c.name, Message: "request timed out", Err: fmt.Errorf("anthropic: %s: %w", op, err)}
	}
	return &llm.Error{Kind: llm.KindProvider, Provider: c.name, Message: "request failed", Err: fmt.Errorf("anthropic: %s: %w", op, err)}
}

// wrapStream is wrap for an error met while streaming. Once message_start
// arrived, a broken connection is an incomplete stream.
func (c *Client) wrapStream(ctx context.Context, err error, started bool) error {
	var apiErr *responseError
	if !started || ctx.Err() != nil || errors.As(err, &apiErr) || errors.Is(err, context.DeadlineExceeded) {
		return c.wrap(ctx, streamOp, err)
	}
	return c.incomplete(fmt.Errorf("anthropic: %s: %w", streamOp, err))
}

// incomplete reports a stream that ended before message_stop; the error
// matches llm.ErrIncompleteStream and, when given, cause.
func (c *Client) incomplete(cause error) error {
	err := fmt.Errorf("anthropic: stream ended before message_stop: %w", llm.ErrIncompleteStream)
	if cause != nil {
		err = fmt.Errorf("%w: %w", llm.ErrIncompleteStream, cause)
	}
	return &llm.Error{Kind: llm.KindProvider, Provider: c.name, Message: "stream ended before message_stop", Err: err}
}

func (c *Client) contextError(op string, ctxErr, err error) error {
	kind, msg := llm.KindCanceled, "request canceled"
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		kind, msg = llm.KindTimeout, "request timed out"
	}
	wrapped := fmt.Errorf("anthropic: %s: %w", op, err)
	if !errors.Is(err, ctxErr) {
		wrapped = fmt.Errorf("anthropic: %s: %w: %w", op, ctxErr, err)
	}
	return &llm.Error{Kind: kind, Provider: c.name, Message: msg, Err: wrapped}
}

// apiError maps an error the API answered with. An error event inside a
// 200 stream gets the status its error type stands for (overloaded_error
// is 529), so that retry policy treats both alike.
func (c *Client) apiError(op string, apiErr *responseError) error {
	status := apiErr.StatusCode
	if status < 400 {
		status = statusForType(apiErr.Type)
	}
	msg := apiErr.Message
	if msg == "" {
		msg = apiErr.Type
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &llm.Error{
		Kind:       llm.KindForStatus(status),
		Provider:   c.name,
		Status:     status,
		Message:    msg,
		RetryAfter: llm.RetryAfter(apiErr.Header, time.Now()),
		Err:        fmt.Errorf("anthropic: %s: %w", op, apiErr),
	}
}

// statusForType is the HTTP status Anthropic documents for an error type.
func statusForType(typ string) int {
	switch typ {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "billing_error":
		return http.StatusPaymentRequired
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "overloaded_error":
		return 529
	}
	return http.StatusInternalServerError
}
