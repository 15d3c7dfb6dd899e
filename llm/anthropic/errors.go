package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentcraftlab/agentcraft/llm"
)

// wrap turns an error of one API call into an *llm.Error whose Kind,
// Status and RetryAfter the retry middleware can judge.
func (c *Client) wrap(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return c.contextError(op, ctxErr, err)
	}
	var apiErr *anthropic.Error
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
	var apiErr *anthropic.Error
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

// apiError maps an error the API answered with: an HTTP error status, or
// an error event inside a 200 stream, whose status is derived from the
// error type (overloaded_error is 529) so that retry policy treats both
// alike.
func (c *Client) apiError(op string, apiErr *anthropic.Error) error {
	typ := string(apiErr.Type())
	status := apiErr.StatusCode
	if status < 400 {
		status = statusForType(typ)
	}
	msg := apiErr.Message
	if msg == "" {
		msg = typ
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &llm.Error{
		Kind:     llm.KindForStatus(status),
		Provider: c.name,
		Status:   status,
		Message:  msg,
		Err:      fmt.Errorf("anthropic: %s: %w", op, apiErr),
	}
	if apiErr.Response != nil {
		e.RetryAfter = llm.RetryAfter(apiErr.Response.Header, time.Now())
	}
	return e
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
