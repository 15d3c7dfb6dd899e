package caldav

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/emersion/go-webdav/caldav"

	"github.com/agentcraftlab/agentcraft/tool"
)

// Defaults and limits.
const (
	// DefaultTimeout bounds one request of the client New makes when
	// Config.HTTPClient is nil.
	DefaultTimeout = 30 * time.Second
	// MaxResponseBytes is how much of any response body is read; a longer
	// body fails the call rather than filling memory.
	MaxResponseBytes = 1 << 20
)

// Config says which calendar the tools use and how to authenticate.
type Config struct {
	// URL is the calendar collection, such as
	// https://host/dav/calendars/alice/work/. Required: an absolute http
	// or https URL without credentials in it. A missing trailing slash is
	// added.
	URL string
	// Username and Password authenticate with HTTP basic auth.
	Username, Password string
	// Token authenticates with a bearer token instead of basic auth; it
	// wins when both are set.
	Token string
	// HTTPClient sends every request. Default: a client with a
	// DefaultTimeout timeout.
	HTTPClient *http.Client
}

// String describes c with its secrets redacted, so that printing a
// Config by mistake never shows the password or token.
func (c Config) String() string {
	return fmt.Sprintf("caldav.Config{URL: %q, Username: %q, Password: %s, Token: %s}", c.URL, c.Username, redacted(c.Password), redacted(c.Token))
}

// LogValue implements slog.LogValuer with the secrets redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("url", c.URL),
		slog.String("username", c.Username),
		slog.String("password", redacted(c.Password)),
		slog.String("token", redacted(c.Token)),
	)
}

func redacted(s string) string {
	if s == "" {
		return `""`
	}
	return "[redacted]"
}

// Calendar is one CalDAV calendar collection and the tools that use it.
// Create it with New; it is safe for concurrent use.
type Calendar struct {
	collection *url.URL // absolute, path ends in "/"
	http       *authClient
	dav        *caldav.Client
}

// New returns the calendar cfg describes. It fails when cfg.URL is not an
// absolute http or https URL.
func New(cfg Config) (*Calendar, error) {
	u, err := url.Parse(cfg.URL)
	switch {
	case cfg.URL == "":
		return nil, errors.New("caldav: new: Config.URL is empty: set it to the calendar collection, like https://host/dav/calendars/alice/work/")
	case err != nil:
		return nil, fmt.Errorf("caldav: new: Config.URL is not a URL: %w", err)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("caldav: new: Config.URL %q is not an absolute http or https URL: write it like https://host/dav/calendars/alice/work/", u.Redacted())
	case u.User != nil:
		return nil, fmt.Errorf("caldav: new: Config.URL %q carries credentials: set Config.Username and Config.Password instead", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("caldav: new: Config.URL %q has a query or fragment: give the collection's path only", u.Redacted())
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		u.RawPath = ""
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	ac := &authClient{client: client, username: cfg.Username, password: cfg.Password, token: cfg.Token}
	dav, err := caldav.NewClient(ac, u.String())
	if err != nil {
		return nil, fmt.Errorf("caldav: new: %w", err)
	}
	return &Calendar{collection: u, http: ac, dav: dav}, nil
}

// Tools returns calendar_create_event and calendar_list_events. The
// create tool also implements tool.Undoable (undo deletes the event) and
// tool.KeyedArgs (the idempotency key becomes the event's UID).
func (c *Calendar) Tools() []tool.Tool {
	return []tool.Tool{&createEvent{cal: c}, &listEvents{cal: c}}
}

// authClient sends requests with the configured credentials and bounds
// every response body. It is the one path to the server, used by our own
// requests and by the go-webdav client (as its webdav.HTTPClient), so no
// request goes out without auth and no body is read unbounded.
type authClient struct {
	client             *http.Client
	username, password string
	token              string
}

// Do implements webdav.HTTPClient.
func (a *authClient) Do(req *http.Request) (*http.Response, error) {
	switch {
	case a.token != "":
		req.Header.Set("Authorization", "Bearer "+a.token)
	case a.username != "" || a.password != "":
		req.SetBasicAuth(a.username, a.password)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: MaxResponseBytes}
	return resp, nil
}

// errTooLarge is what reading past MaxResponseBytes of a body returns.
var errTooLarge = fmt.Errorf("response body is larger than %d bytes", MaxResponseBytes)

// limitedBody fails once more than left bytes were read: truncating
// silently would hand the XML or iCalendar decoder a cut document and
// report a confusing syntax error instead.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n - int(-l.left), errTooLarge
	}
	return n, err
}

func (l *limitedBody) Close() error { return l.rc.Close() }

// response is what do read of an answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request to path on the calendar's server and reads the
// whole (bounded) body.
func (c *Calendar) do(ctx context.Context, method, path string, header http.Header, body []byte) (*response, error) {
	u := *c.collection
	u.Path, u.RawPath = path, ""
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// objectPath is the path of the calendar object resource for uid.
func (c *Calendar) objectPath(uid string) string {
	return c.collection.Path + uid + ".ics"
}

// inCollection reports whether path names a resource directly inside the
// calendar collection: Undo deletes only there, so a payload altered in
// storage cannot aim our credentials at another resource.
func (c *Calendar) inCollection(path string) bool {
	name, ok := strings.CutPrefix(path, c.collection.Path)
	return ok && name != "" && !strings.Contains(name, "/") && name != "." && name != ".."
}

// failure words a failed exchange for the model: the method, the URL path
// (never the host's credentials) and the cause. The caller's own
// cancellation is returned as a Go error instead, as tool.Tool asks.
func failure(ctx context.Context, method, path string, err error) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, fmt.Errorf("caldav: %s %s: %w", method, path, ctx.Err())
	}
	return tool.ErrorResult("calendar server: %s %s failed: %s", method, path, transportMessage(err)), nil
}

// transportMessage drops the *url.Error wrapper, which repeats the whole
// URL, and names client timeouts plainly.
func transportMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return "the server did not answer in time: try again later"
		}
		err = ue.Err
	}
	return err.Error()
}

// statusFailure words an unexpected HTTP status for the model.
func statusFailure(method, path string, resp *response) tool.Result {
	msg := fmt.Sprintf("calendar server: %s %s: HTTP %d %s", method, path, resp.status, http.StatusText(resp.status))
	switch resp.status {
	case http.StatusUnauthorized:
		msg += ": the calendar credentials were refused; ask an administrator to check them"
	case http.StatusForbidden:
		msg += ": the calendar account may not do this"
	case http.StatusNotFound:
		msg += ": the calendar collection does not exist; check the configured URL"
	}
	return tool.ErrorResult("%s", msg)
}
