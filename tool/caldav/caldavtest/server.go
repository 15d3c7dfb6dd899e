// Package caldavtest serves an in-memory CalDAV calendar for tests of
// package caldav and of anything that configures it: go-webdav's
// caldav.Handler over a Backend that keeps events in a map, behind HTTP
// basic auth, on an httptest.Server.
//
//	srv := caldavtest.New(t, "alice", "secret")
//	cal, err := caldav.New(caldav.Config{URL: srv.URL(), Username: "alice", Password: "secret"})
//	...
//	if got := srv.Events(); len(got) != 1 { ... }
//	if n := srv.Puts(uid); n != 2 { ... } // a retried step reached the server twice
//
// The backend honours what the tools rely on: PUT with If-None-Match: *
// answers 412 when the resource exists, If-Match compares ETags, a UID
// already stored under another resource answers 409 (no-uid-conflict),
// GET and DELETE of a missing resource answer 404, and calendar-query
// REPORTs filter VEVENTs by time range as RFC 4791 section 9.9 says.
package caldavtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/caldav"
)

// Paths of the served tree. go-webdav's handler tells resources apart by
// their depth below the prefix: principal, home set, calendar, object.
const (
	prefix        = "/dav"
	principalPath = prefix + "/alice/"
	homeSetPath   = principalPath + "calendars/"
	calendarPath  = homeSetPath + "work/"
)

// Event is one stored event, as the tests inspect it.
type Event struct {
	UID, Summary, Description, Location string
	Start, End                          time.Time
}

// Server is an in-memory CalDAV server with one calendar. Create it with
// New; it is closed when the test ends.
type Server struct {
	srv            *httptest.Server
	user, password string

	// mu guards objects, puts and deletes.
	mu      sync.Mutex
	objects map[string]*object // by path
	puts    map[string]int     // by uid (the resource name without .ics)
	deletes map[string]int
}

// object is a stored calendar object resource, kept encoded so that no
// caller shares a mutable *ical.Calendar with the store.
type object struct {
	data    []byte
	uid     string
	etag    string
	modTime time.Time
}

// New starts a server that requires HTTP basic auth with user and
// password; other or missing credentials are answered 401.
func New(t testing.TB, user, password string) *Server {
	t.Helper()
	s := &Server{
		user: user, password: password,
		objects: map[string]*object{}, puts: map[string]int{}, deletes: map[string]int{},
	}
	h := &caldav.Handler{Backend: &backend{s: s}, Prefix: prefix}
	s.srv = httptest.NewServer(s.auth(s.count(h)))
	t.Cleanup(s.Close)
	return s
}

// URL returns the calendar collection's URL, for caldav.Config.URL.
func (s *Server) URL() string { return s.srv.URL + calendarPath }

// Close shuts the server down. New registers it with t.Cleanup; calling it
// earlier makes every request fail, as a server that went away.
func (s *Server) Close() { s.srv.Close() }

// Events returns the stored events, sorted by UID.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	for _, o := range s.objects {
		cal, err := ical.NewDecoder(bytes.NewReader(o.data)).Decode()
		if err != nil {
			continue // cannot happen: PUT stored only what decoded
		}
		for _, e := range cal.Events() {
			ev := Event{}
			ev.UID, _ = e.Props.Text(ical.PropUID)
			ev.Summary, _ = e.Props.Text(ical.PropSummary)
			ev.Description, _ = e.Props.Text(ical.PropDescription)
			ev.Location, _ = e.Props.Text(ical.PropLocation)
			ev.Start, _ = e.DateTimeStart(time.UTC)
			ev.End, _ = e.DateTimeEnd(time.UTC)
			out = append(out, ev)
		}
	}
	slices.SortFunc(out, func(a, b Event) int { return strings.Compare(a.UID, b.UID) })
	return out
}

// Puts returns how many authenticated PUT requests reached the resource
// of uid (<collection>/<uid>.ics), whatever their outcome.
func (s *Server) Puts(uid string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.puts[uid]
}

// Deletes returns how many authenticated DELETE requests reached the
// resource of uid, whatever their outcome.
func (s *Server) Deletes(uid string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deletes[uid]
}

// auth refuses requests without the configured basic credentials.
func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(s.user)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(s.password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="caldavtest"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// count records PUT and DELETE requests per object resource.
func (s *Server) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, ok := strings.CutPrefix(r.URL.Path, calendarPath); ok && strings.HasSuffix(name, ".ics") {
			uid := strings.TrimSuffix(name, ".ics")
			s.mu.Lock()
			switch r.Method {
			case http.MethodPut:
				s.puts[uid]++
			case http.MethodDelete:
				s.deletes[uid]++
			}
			s.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// backend implements caldav.Backend over the Server's map.
type backend struct{ s *Server }

var _ caldav.Backend = (*backend)(nil)

func (*backend) CurrentUserPrincipal(context.Context) (string, error) { return principalPath, nil }

func (*backend) CalendarHomeSetPath(context.Context) (string, error) { return homeSetPath, nil }

func (*backend) CreateCalendar(context.Context, *caldav.Calendar) error {
	return webdav.NewHTTPError(http.StatusForbidden, errors.New("caldavtest: the server has one calendar"))
}

func theCalendar() caldav.Calendar {
	return caldav.Calendar{Path: calendarPath, Name: "Work", SupportedComponentSet: []string{ical.CompEvent}}
}

func (*backend) ListCalendars(context.Context) ([]caldav.Calendar, error) {
	return []caldav.Calendar{theCalendar()}, nil
}

func (*backend) GetCalendar(_ context.Context, p string) (*caldav.Calendar, error) {
	if !isCalendar(p) {
		return nil, webdav.NewHTTPError(http.StatusNotFound, fmt.Errorf("caldavtest: no calendar at %s", p))
	}
	c := theCalendar()
	return &c, nil
}

func isCalendar(p string) bool { return path.Clean(p) == path.Clean(calendarPath) }

// decoded returns o as go-webdav wants it, decoded afresh.
func (o *object) decoded(p string) (*caldav.CalendarObject, error) {
	cal, err := ical.NewDecoder(bytes.NewReader(o.data)).Decode()
	if err != nil {
		return nil, err
	}
	return &caldav.CalendarObject{Path: p, ModTime: o.modTime, ContentLength: int64(len(o.data)), ETag: o.etag, Data: cal}, nil
}

func (b *backend) GetCalendarObject(_ context.Context, p string, _ *caldav.CalendarCompRequest) (*caldav.CalendarObject, error) {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	o := b.s.objects[p]
	if o == nil {
		return nil, webdav.NewHTTPError(http.StatusNotFound, fmt.Errorf("caldavtest: no object at %s", p))
	}
	return o.decoded(p)
}

// all returns the calendar's objects sorted by path.
func (b *backend) all(p string) ([]caldav.CalendarObject, error) {
	if !isCalendar(p) {
		return nil, webdav.NewHTTPError(http.StatusNotFound, fmt.Errorf("caldavtest: no calendar at %s", p))
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	paths := make([]string, 0, len(b.s.objects))
	for op := range b.s.objects {
		paths = append(paths, op)
	}
	slices.Sort(paths)
	out := make([]caldav.CalendarObject, 0, len(paths))
	for _, op := range paths {
		co, err := b.s.objects[op].decoded(op)
		if err != nil {
			return nil, err
		}
		out = append(out, *co)
	}
	return out, nil
}

func (b *backend) ListCalendarObjects(_ context.Context, p string, _ *caldav.CalendarCompRequest) ([]caldav.CalendarObject, error) {
	return b.all(p)
}

// QueryCalendarObjects applies the query's time range with the overlap
// rule of RFC 4791 section 9.9 (start < range end and end > range start)
// for VEVENTs, and go-webdav's caldav.Filter for any other filter.
func (b *backend) QueryCalendarObjects(_ context.Context, p string, q *caldav.CalendarQuery) ([]caldav.CalendarObject, error) {
	objs, err := b.all(p)
	if err != nil {
		return nil, err
	}
	cf := q.CompFilter
	if cf.Name != ical.CompCalendar || len(cf.Comps) != 1 || cf.Comps[0].Name != ical.CompEvent ||
		len(cf.Props) > 0 || len(cf.Comps[0].Props) > 0 || len(cf.Comps[0].Comps) > 0 {
		return caldav.Filter(q, objs)
	}
	rangeStart, rangeEnd := cf.Comps[0].Start, cf.Comps[0].End
	var out []caldav.CalendarObject
	for _, co := range objs {
		for _, e := range co.Data.Events() {
			start, err1 := e.DateTimeStart(time.UTC)
			end, err2 := e.DateTimeEnd(time.UTC)
			if err1 != nil || err2 != nil {
				continue
			}
			if end.Equal(start) {
				end = start.Add(time.Nanosecond) // an instant still occupies its moment
			}
			if (rangeEnd.IsZero() || start.Before(rangeEnd)) && (rangeStart.IsZero() || end.After(rangeStart)) {
				out = append(out, co)
				break
			}
		}
	}
	return out, nil
}

func (b *backend) PutCalendarObject(_ context.Context, p string, cal *ical.Calendar, opts *caldav.PutCalendarObjectOptions) (*caldav.CalendarObject, error) {
	if dir, _ := path.Split(p); dir != calendarPath || !strings.HasSuffix(p, ".ics") {
		return nil, webdav.NewHTTPError(http.StatusForbidden, fmt.Errorf("caldavtest: objects go in %s as <name>.ics", calendarPath))
	}
	_, uid, err := caldav.ValidateCalendarObject(cal)
	if err != nil || uid == "" {
		return nil, caldav.NewPreconditionError(caldav.PreconditionValidCalendarObjectResource)
	}
	var buf bytes.Buffer
	if err := ical.NewEncoder(&buf).Encode(cal); err != nil {
		return nil, caldav.NewPreconditionError(caldav.PreconditionValidCalendarData)
	}

	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	old := b.s.objects[p]
	switch {
	case opts.IfNoneMatch.IsWildcard() && old != nil:
		return nil, webdav.NewHTTPError(http.StatusPreconditionFailed, errors.New("caldavtest: resource exists"))
	case opts.IfMatch.IsWildcard() && old == nil:
		return nil, webdav.NewHTTPError(http.StatusPreconditionFailed, errors.New("caldavtest: resource does not exist"))
	case opts.IfMatch.IsSet() && !opts.IfMatch.IsWildcard():
		etag, err := opts.IfMatch.ETag()
		if err != nil || old == nil || etag != old.etag {
			return nil, webdav.NewHTTPError(http.StatusPreconditionFailed, errors.New("caldavtest: etag does not match"))
		}
	}
	for op, o := range b.s.objects {
		if o.uid == uid && op != p {
			return nil, caldav.NewPreconditionError(caldav.PreconditionNoUIDConflict)
		}
	}
	sum := sha256.Sum256(buf.Bytes())
	o := &object{data: buf.Bytes(), uid: uid, etag: hex.EncodeToString(sum[:8]), modTime: time.Now().UTC().Truncate(time.Second)}
	b.s.objects[p] = o
	return &caldav.CalendarObject{Path: p, ModTime: o.modTime, ContentLength: int64(len(o.data)), ETag: o.etag}, nil
}

func (b *backend) DeleteCalendarObject(_ context.Context, p string) error {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	if b.s.objects[p] == nil {
		return webdav.NewHTTPError(http.StatusNotFound, fmt.Errorf("caldavtest: no object at %s", p))
	}
	delete(b.s.objects, p)
	return nil
}
