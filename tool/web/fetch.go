package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html/charset"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/tool"
)

// Defaults and limits of FetchOptions.
const (
	// DefaultFetchMaxBytes is how much of a response body web_fetch reads.
	DefaultFetchMaxBytes = 5 << 20
	// DefaultFetchMaxTextBytes is how much text one call returns.
	DefaultFetchMaxTextBytes = 64 << 10
	DefaultFetchTimeout      = 30 * time.Second
	// DefaultFetchRedirects is how many redirects web_fetch follows.
	DefaultFetchRedirects = 5
	// userAgent names the tool to the sites it reads; "Mozilla/5.0
	// (compatible; …)" is the form sites expect of a well-behaved bot.
	userAgent = "Mozilla/5.0 (compatible; AgentCraft-web_fetch/1.0; +https://github.com/agentcraftlab/agentcraft)"
)

// FetchOptions configure a Fetch. Zero fields mean the defaults.
type FetchOptions struct {
	// MaxBytes is how much of a response body is read; a longer page is
	// read up to it and said to be cut. Default DefaultFetchMaxBytes.
	// The egress client's own limit (egress.Policy.MaxResponseBytes)
	// applies too.
	MaxBytes int64
	// MaxTextBytes is how much text one call returns; the rest is read
	// by calling again with "offset". Default DefaultFetchMaxTextBytes.
	MaxTextBytes int
	// Timeout bounds one call: connecting, redirects and reading the
	// body. Default DefaultFetchTimeout.
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed; 0 means the
	// default DefaultFetchRedirects, a negative value none. The egress
	// client stops after egress.MaxRedirects whatever this says.
	MaxRedirects int
}

// Fetch is the "web_fetch" tool: it GETs one URL through the egress-policy
// client and returns the page as text. HTML is reduced to its readable
// main text (title, byline, article; navigation and ads dropped) with
// readability; plain text, JSON and XML are passed through; anything else
// (PDF, images, archives) is refused with a message saying so. Create it
// with NewFetch.
//
// Its capability is medium: it reads outside data, and where it goes is
// the model's choice, bounded by the egress policy.
type Fetch struct {
	client *http.Client
	opts   FetchOptions
	schema string
}

var _ tool.Tool = (*Fetch)(nil)

// NewFetch returns the web_fetch tool sending through client, which must
// be the egress-policy client (egress.Guard.Client): it is required so
// that nothing falls back to http.DefaultClient, which reaches the
// private network. opts nil means defaults; it is copied.
func NewFetch(client *http.Client, opts *FetchOptions) (*Fetch, error) {
	if client == nil {
		return nil, errors.New("web: web_fetch: no HTTP client: pass the egress-policy client (egress.Guard.Client)")
	}
	f := &Fetch{}
	if opts != nil {
		f.opts = *opts
	}
	o := &f.opts
	switch {
	case o.MaxBytes < 0:
		return nil, fmt.Errorf("web: web_fetch: max bytes %d: want 0 (default %d) or more", o.MaxBytes, DefaultFetchMaxBytes)
	case o.MaxBytes == 0:
		o.MaxBytes = DefaultFetchMaxBytes
	}
	switch {
	case o.MaxTextBytes < 0:
		return nil, fmt.Errorf("web: web_fetch: max text bytes %d: want 0 (default %d) or more", o.MaxTextBytes, DefaultFetchMaxTextBytes)
	case o.MaxTextBytes == 0:
		o.MaxTextBytes = DefaultFetchMaxTextBytes
	}
	switch {
	case o.Timeout < 0:
		return nil, fmt.Errorf("web: web_fetch: timeout %s: want 0 (default %s) or more", o.Timeout, DefaultFetchTimeout)
	case o.Timeout == 0:
		o.Timeout = DefaultFetchTimeout
	}
	switch {
	case o.MaxRedirects == 0:
		o.MaxRedirects = DefaultFetchRedirects
	case o.MaxRedirects < 0:
		o.MaxRedirects = 0
	}
	// A copy of the client with our redirect limit in front of its own
	// check (the egress client checks each hop's URL).
	c := *client
	next := client.CheckRedirect
	limit := o.MaxRedirects
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > limit {
			return &redirectError{limit: limit}
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	f.client = &c
	f.schema = `{"type":"object","properties":{` +
		`"url":{"type":"string","minLength":1,"description":"Absolute http or https URL of the page."},` +
		`"offset":{"type":"integer","minimum":0,"description":"Byte of the page's text to start at, to read on where an earlier call said the text was cut. Default 0."}},` +
		`"required":["url"],"additionalProperties":false}`
	return f, nil
}

// redirectError is the refusal of one redirect too many.
type redirectError struct{ limit int }

func (e *redirectError) Error() string { return fmt.Sprintf("stopped after %d redirects", e.limit) }

const fetchExample = `{"url": "https://go.dev/blog/go1.26"}`

// Name implements tool.Tool.
func (*Fetch) Name() string { return "web_fetch" }

// Description implements tool.Tool.
func (f *Fetch) Description() string {
	return fmt.Sprintf("Read a web page: GET the URL and return its title and main text (navigation and ads left out); plain text, JSON and XML come back as they are. "+
		"At most %d bytes of text per call: when the text is cut, the answer says the offset to call again with. "+
		"It does not run scripts (use the browser tool for pages built by JavaScript) and does not read PDFs or images. "+
		"Addresses on private networks and this server are refused.", f.opts.MaxTextBytes)
}

// Schema implements tool.Tool.
func (f *Fetch) Schema() json.RawMessage { return json.RawMessage(f.schema) }

// Capability implements tool.Tool.
func (*Fetch) Capability() tool.Capability { return tool.CapabilityMedium }

// Call implements tool.Tool. A refused, failed or timed-out request, an
// HTTP error status and an unreadable content type are error Results; the
// caller's cancellation is a Go error.
func (f *Fetch) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	var in struct {
		URL    string `json:"url"`
		Offset int    `json:"offset"`
	}
	if res, ok := tool.DecodeArguments(json.RawMessage(f.schema), fetchExample, args, &in); !ok {
		return res, nil
	}
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return tool.ErrorResult(`"url" %q is not an absolute http or https URL: write it like "https://example.com/page"`, in.URL), nil
	}
	u.Fragment = ""
	cctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tool.ErrorResult(`"url" %q: %v`, in.URL, err), nil
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,application/xml;q=0.8,*/*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return f.failure(u, err), nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBytes+1))
	truncated := int64(len(body)) > f.opts.MaxBytes
	if truncated {
		body = body[:f.opts.MaxBytes]
	}
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		if !errors.Is(err, egress.ErrTooLarge) || len(body) == 0 {
			return f.failure(u, err), nil
		}
		truncated = true // the egress client's own limit
	}
	final := resp.Request.URL
	ctype := resp.Header.Get("Content-Type")
	kind, mediaType := classify(ctype, body)
	if kind == kindOther && resp.StatusCode >= 400 {
		return tool.ErrorResult("HTTP %d %s from %s", resp.StatusCode, http.StatusText(resp.StatusCode), final.Redacted()), nil
	}
	if kind == kindOther {
		return tool.ErrorResult("%s is %s, which web_fetch does not read: it reads HTML pages, plain text, JSON and XML", final.Redacted(), mediaType), nil
	}
	text := decodeText(body, ctype)
	var head strings.Builder
	switch kind {
	case kindHTML:
		p := readable([]byte(text), final)
		if p.title != "" {
			fmt.Fprintf(&head, "Title: %s\n", p.title)
		}
		if p.byline != "" {
			fmt.Fprintf(&head, "Byline: %s\n", p.byline)
		}
		fmt.Fprintf(&head, "URL: %s\n", final.Redacted())
		text = p.text
	default:
		fmt.Fprintf(&head, "URL: %s\nContent-Type: %s\n", final.Redacted(), mediaType)
		text = strings.TrimSpace(text)
	}
	if resp.StatusCode >= 400 {
		excerpt, cutted := cut(text, 1000)
		if cutted {
			excerpt += "…"
		}
		return tool.ErrorResult("HTTP %d %s from %s\n\n%s", resp.StatusCode, http.StatusText(resp.StatusCode), final.Redacted(), excerpt), nil
	}
	return f.page(head.String(), text, in.Offset, truncated)
}

// page words the text from offset, cut at MaxTextBytes, for the model.
func (f *Fetch) page(head, text string, offset int, truncated bool) (tool.Result, error) {
	total := len(text)
	if offset > 0 {
		if offset >= total {
			return tool.ErrorResult(`"offset" %d is past the end of the text (%d bytes)`, offset, total), nil
		}
		for offset > 0 && offset < total && !utf8RuneStart(text[offset]) {
			offset-- // to the start of the rune the offset falls in
		}
		text = text[offset:]
		head += fmt.Sprintf("Text from byte %d of %d\n", offset, total)
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("\n")
	if text == "" {
		b.WriteString("(no text)")
	}
	shown, cutted := cut(text, f.opts.MaxTextBytes)
	b.WriteString(shown)
	if cutted {
		next := offset + len(shown)
		fmt.Fprintf(&b, "\n\n[text cut at byte %d of %d: call web_fetch again with \"offset\": %d to read on]", next, total, next)
	}
	if truncated {
		fmt.Fprintf(&b, "\n\n[the page is longer than %d bytes: only its beginning was read]", f.opts.MaxBytes)
	}
	return tool.Result{Content: b.String()}, nil
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// failure words a transport error for the model.
func (f *Fetch) failure(u *url.URL, err error) tool.Result {
	target := u.Redacted()
	var re *redirectError
	switch {
	case errors.Is(err, egress.ErrBlocked):
		return tool.ErrorResult("GET %s was refused by the server's outbound policy: loopback, private-network and metadata addresses cannot be reached unless an administrator allow-lists them (%v)", target, unwrapURLError(err))
	case errors.As(err, &re):
		return tool.ErrorResult("GET %s: %v: fetch the final address directly", target, re)
	case errors.Is(err, context.DeadlineExceeded):
		return tool.ErrorResult("GET %s did not finish within %v: try again later", target, f.opts.Timeout)
	}
	return tool.ErrorResult("GET %s failed: %v", target, unwrapURLError(err))
}

// Kinds of body web_fetch tells apart.
const (
	kindOther = iota
	kindHTML
	kindText
)

// classify says how to read a body of content type ctype (sniffed from
// the body when missing or malformed), and the media type it went by.
func classify(ctype string, body []byte) (kind int, mediaType string) {
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil || mt == "" {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	mt = strings.ToLower(mt)
	switch {
	case mt == "text/html", mt == "application/xhtml+xml":
		return kindHTML, mt
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"),
		mt == "application/javascript", mt == "application/x-ndjson", mt == "application/yaml":
		return kindText, mt
	}
	return kindOther, mt
}

// decodeText converts body to UTF-8 from the charset that ctype, a byte
// order mark or (for HTML) a <meta> names; UTF-8 by default. Bytes that
// are not valid in it become U+FFFD.
func decodeText(body []byte, ctype string) string {
	r, err := charset.NewReader(bytes.NewReader(body), ctype)
	if err == nil {
		if b, err := io.ReadAll(r); err == nil {
			body = b
		}
	}
	return string(bytes.ToValidUTF8(body, []byte("\uFFFD")))
}
