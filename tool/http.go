package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/internal/httpcall"
)

// Defaults of HTTPOptions.
const (
	DefaultHTTPMaxResponseBytes = 1 << 20
	DefaultHTTPTimeout          = 30 * time.Second
	// MaxHTTPRequestBody bounds the body the model may send.
	MaxHTTPRequestBody = 256 << 10
)

// HTTPOptions configure an HTTPRequest. Zero fields mean the defaults.
type HTTPOptions struct {
	// MaxResponseBytes is how much of a response body the model reads; a
	// longer body is cut with a note. Default DefaultHTTPMaxResponseBytes.
	MaxResponseBytes int
	// Timeout bounds one request, redirects and body included. Default
	// DefaultHTTPTimeout; the client's own timeout applies as well.
	Timeout time.Duration
}

// HTTPRequest is the built-in "http_request" tool: it sends one HTTP
// request and returns the status, the content type and the body. Create it
// with NewHTTPRequest.
//
// Its capability is high because it can POST, PUT, PATCH and DELETE: a
// call can change things elsewhere that cannot be undone. (A tool has one
// capability, so a GET-only variant would be a separate tool.)
//
// Where requests may go is the client's business: the server passes the
// egress-policy client (internal/egress), which refuses loopback, private
// and metadata addresses unless allow-listed, checked at dial time on
// every redirect. The tool reports such refusals to the model plainly.
type HTTPRequest struct {
	client *http.Client
	opts   HTTPOptions
}

var _ Tool = (*HTTPRequest)(nil)

// NewHTTPRequest returns the http_request tool sending through client.
// client is required, so that no configuration silently falls back to
// http.DefaultClient, which would reach the private network. opts nil
// means defaults; it is copied.
func NewHTTPRequest(client *http.Client, opts *HTTPOptions) (*HTTPRequest, error) {
	if client == nil {
		return nil, errors.New("tool: http_request: no HTTP client: pass the egress-policy client (egress.Guard.Client)")
	}
	h := &HTTPRequest{client: client}
	if opts != nil {
		h.opts = *opts
	}
	h.opts.MaxResponseBytes = orDefault(h.opts.MaxResponseBytes, DefaultHTTPMaxResponseBytes)
	h.opts.Timeout = orDefault(h.opts.Timeout, DefaultHTTPTimeout)
	return h, nil
}

var httpRequestArgs = mustArgSchema("http_request",
	`{"type":"object","properties":{`+
		`"url":{"type":"string","minLength":1,"description":"Absolute http or https URL."},`+
		`"method":{"type":"string","enum":["GET","POST","PUT","PATCH","DELETE"],"description":"HTTP method. Default GET."},`+
		`"headers":{"type":"object","additionalProperties":{"type":"string"},"description":"Request headers, e.g. {\"Accept\": \"application/json\"}."},`+
		`"body":{"type":"string","description":"Request body. A body that is JSON is sent with Content-Type: application/json unless headers set one."}},`+
		`"required":["url"],"additionalProperties":false}`,
	`{"url": "https://api.example.com/items?q=shoes", "method": "GET"}`)

// Name implements Tool.
func (*HTTPRequest) Name() string { return "http_request" }

// Description implements Tool.
func (h *HTTPRequest) Description() string {
	return fmt.Sprintf("Send an HTTP request (GET, POST, PUT, PATCH or DELETE) to a public URL and read the response: status, content type and body (text, at most %d bytes; longer bodies are cut). "+
		"Addresses on private networks and this server are refused.", h.opts.MaxResponseBytes)
}

// Schema implements Tool.
func (*HTTPRequest) Schema() json.RawMessage { return httpRequestArgs.raw }

// Capability implements Tool.
func (*HTTPRequest) Capability() Capability { return CapabilityHigh }

// Call implements Tool. Refused, failed and timed-out requests and answers
// with status 400 or more are error Results; the caller's cancellation is
// a Go error.
func (h *HTTPRequest) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	var in struct {
		URL     string            `json:"url"`
		Method  string            `json:"method"`
		Headers map[string]string `json:"headers"`
		Body    *string           `json:"body"`
	}
	if res, ok := httpRequestArgs.parse(args, &in); !ok {
		return res, nil
	}
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ErrorResult(`"url" %q is not an absolute http or https URL: write it like "https://example.com/path"`, in.URL), nil
	}
	method := in.Method
	if method == "" {
		method = http.MethodGet
	}
	req := &httpcall.Request{Method: method, URL: u.String(), Header: in.Headers}
	if in.Body != nil {
		if len(*in.Body) > MaxHTTPRequestBody {
			return ErrorResult(`"body" is %d bytes, more than the limit of %d`, len(*in.Body), MaxHTTPRequestBody), nil
		}
		req.Body = []byte(*in.Body)
	}
	return sendHTTP(ctx, h.client, h.opts, req)
}

// sendHTTP sends req through client with the limits of opts and words the
// answer for the model: status, content type, location and the body (text,
// cut at the cap; binary bodies summarised). Refused, failed and timed-out
// requests and answers with status 400 or more are error Results; the
// caller's cancellation is a Go error. The http_request tool and the tools
// imported from OpenAPI documents share it.
func sendHTTP(ctx context.Context, client *http.Client, opts HTTPOptions, req *httpcall.Request) (Result, error) {
	req.Timeout, req.MaxResponseBytes = opts.Timeout, opts.MaxResponseBytes
	resp, err := httpcall.Do(ctx, client, req)
	if err != nil {
		var herr *httpcall.HeaderError
		switch {
		case errors.As(err, &herr):
			return ErrorResult("%v", herr), nil
		case ctx.Err() != nil:
			return Result{}, ctx.Err()
		}
		return httpFailure(req, opts.Timeout, err), nil
	}
	data := resp.Body
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %s\n", resp.Status)
	ctype := resp.Header.Get("Content-Type")
	if ctype != "" {
		fmt.Fprintf(&b, "Content-Type: %s\n", ctype)
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		fmt.Fprintf(&b, "Location: %s\n", loc)
	}
	b.WriteString("\n")
	switch {
	case len(data) == 0:
		b.WriteString("(empty body)")
	case isBinary(data):
		if ctype == "" {
			ctype = http.DetectContentType(data)
		}
		fmt.Fprintf(&b, "(binary body, %s, %d bytes read: not shown)", ctype, len(data))
	default:
		if resp.Truncated {
			data = trimCutRunes(data, false)
		}
		b.Write(bytes.ToValidUTF8(data, []byte(string(utf8.RuneError))))
		if resp.Truncated {
			fmt.Fprintf(&b, "\n[body truncated at %d bytes]", len(data))
		}
	}
	return Result{Content: b.String(), IsError: resp.StatusCode >= 400}, nil
}

// httpFailure words a transport error for the model.
func httpFailure(req *httpcall.Request, timeout time.Duration, err error) Result {
	target := req.Method + " " + req.URL
	if u, perr := url.Parse(req.URL); perr == nil {
		target = req.Method + " " + u.Redacted()
	}
	switch {
	case errors.Is(err, egress.ErrBlocked):
		return ErrorResult("%s was refused by the server's outbound policy: loopback, private-network and metadata addresses cannot be reached unless an administrator allow-lists them (%v)", target, err)
	case errors.Is(err, context.DeadlineExceeded):
		return ErrorResult("%s did not finish within %v: try again later or ask for less data", target, timeout)
	}
	return ErrorResult("%s failed: %v", target, err)
}
