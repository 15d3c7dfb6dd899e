// Package httpcall is the one HTTP request/response core that the
// http-request workflow node and the HTTP tools (http_request and the tools
// imported from OpenAPI documents) share: it builds the request (method,
// URL, headers, body), refuses headers that would smuggle another header
// or request in, bounds one attempt with a timeout, reads at most a capped
// response body and retries network errors and 5xx answers with backoff.
//
// Where requests may go is the client's business: callers pass the
// egress-policy client (internal/egress.Guard.Client).
//
//	resp, err := httpcall.Do(ctx, client, &httpcall.Request{Method: "GET", URL: u, MaxResponseBytes: 1 << 20})
package httpcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/egress"
)

// Request is one HTTP request.
type Request struct {
	// Method is the HTTP method. Default GET.
	Method string
	// URL is the absolute URL.
	URL string
	// Header holds the request headers, set after the defaults (a JSON
	// body's Content-Type), so that they override them.
	Header map[string]string
	// Body is sent when not nil; a body that is valid JSON goes with
	// Content-Type: application/json unless Header sets one.
	Body []byte
	// Timeout bounds the attempt, redirects and body included. Zero means
	// only ctx bounds it.
	Timeout time.Duration
	// MaxResponseBytes caps the response body read; a longer body is cut
	// and Response.Truncated set. Required (> 0).
	MaxResponseBytes int
}

// Response is the answer to a Request.
type Response struct {
	// StatusCode is the status code, Status the status line ("200 OK").
	StatusCode int
	Status     string
	// Header holds the response headers.
	Header http.Header
	// Body is the body read, at most Request.MaxResponseBytes.
	Body []byte
	// Truncated reports that the body was longer than the cap (ours or
	// the egress policy's) and was cut.
	Truncated bool
}

// HeaderError reports a header that cannot be sent as given.
type HeaderError struct {
	// Name is the header name as given.
	Name string
}

func (e *HeaderError) Error() string {
	return fmt.Sprintf("header %q is not a valid HTTP header name and value: use letters, digits and '-' in names, no line breaks in values", e.Name)
}

// Do sends req through client and reads the response body up to the cap.
// A refused header is a *HeaderError; transport errors are returned as the
// client reports them (egress.ErrBlocked, context.DeadlineExceeded …).
func Do(ctx context.Context, client *http.Client, req *Request) (*Response, error) {
	if client == nil {
		return nil, errors.New("httpcall: no HTTP client: pass the egress-policy client (egress.Guard.Client)")
	}
	if req.MaxResponseBytes <= 0 {
		return nil, errors.New("httpcall: MaxResponseBytes must be positive")
	}
	for k, v := range req.Header {
		if !ValidHeader(k, v) {
			return nil, &HeaderError{Name: k}
		}
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, req.URL, body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if req.Body != nil && json.Valid(req.Body) {
		hreq.Header.Set("Content-Type", "application/json")
	}
	for k, v := range req.Header {
		hreq.Header.Set(k, v)
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(req.MaxResponseBytes)+1))
	out := &Response{StatusCode: resp.StatusCode, Status: resp.Status, Header: resp.Header}
	if len(data) > req.MaxResponseBytes {
		data = data[:req.MaxResponseBytes]
		out.Truncated = true
	}
	if err != nil {
		if !errors.Is(err, egress.ErrTooLarge) {
			return nil, fmt.Errorf("read response body: %w", err)
		}
		out.Truncated = true // the policy's own cap is below ours
	}
	out.Body = data
	return out, nil
}

// Retry calls do until it succeeds with a status below 500 or retries
// extra attempts are spent, waiting 200 ms, 400 ms, 800 ms … between
// attempts. It returns the last attempt's result, or ctx's error when ctx
// ends while waiting.
func Retry(ctx context.Context, retries int, do func() (*Response, error)) (*Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := do()
		var herr *HeaderError
		retryable := err != nil && !errors.As(err, &herr) || err == nil && resp.StatusCode >= 500
		if !retryable || attempt >= retries || ctx.Err() != nil {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(200<<attempt) * time.Millisecond):
		}
	}
}

// ValidHeader reports whether k: v can be sent as a header without
// smuggling another header or request into it.
func ValidHeader(k, v string) bool {
	if k == "" {
		return false
	}
	for _, c := range []byte(k) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return !strings.ContainsAny(v, "\r\n\x00")
}
