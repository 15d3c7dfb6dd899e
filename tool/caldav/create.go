package caldav

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/emersion/go-ical"

	"github.com/agentcraftlab/agentcraft/tool"
)

// Limits of calendar_create_event's arguments.
const (
	MaxSummaryChars     = 500
	MaxLocationChars    = 500
	MaxDescriptionChars = 10000
	// uidSuffix ends every UID the tool makes, so events it created can be
	// told apart on the server.
	uidSuffix = "@agentcraft"
	// prodID names the creator in every calendar object we write.
	prodID = "-//AgentCraft//EN"
)

// uidPattern is what a UID may look like: it becomes the last segment of
// the resource's URL, so anything that would need escaping or could
// change the path ('/', '%', "..") is refused instead.
var uidPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9@._-]{0,254}$`)

// createSchema is built from the limits above so that the schema the
// model reads and the limits enforced cannot drift apart.
var createSchema = fmt.Sprintf(`{"type":"object","properties":{`+
	`"summary":{"type":"string","minLength":1,"maxLength":%d,"description":"Title of the event, one line."},`+
	`"start":{"type":"string","minLength":1,"description":"Start, RFC 3339 with an offset, e.g. \"2026-03-14T15:00:00+09:00\"."},`+
	`"end":{"type":"string","description":"End, RFC 3339, after start. Default: one hour after start."},`+
	`"description":{"type":"string","maxLength":%d,"description":"Longer notes."},`+
	`"location":{"type":"string","maxLength":%d,"description":"Where it takes place."},`+
	`"uid":{"type":"string","description":"Event UID; leave it out, the platform sets it so that a retried step does not create a second event."}},`+
	`"required":["summary","start"],"additionalProperties":false}`,
	MaxSummaryChars, MaxDescriptionChars, MaxLocationChars)

const createExample = `{"summary": "Dentist", "start": "2026-03-14T15:00:00+09:00", "end": "2026-03-14T15:30:00+09:00", "location": "Shibuya"}`

// createEvent is the calendar_create_event tool.
type createEvent struct{ cal *Calendar }

var (
	_ tool.Undoable  = (*createEvent)(nil)
	_ tool.KeyedArgs = (*createEvent)(nil)
)

func (*createEvent) Name() string { return "calendar_create_event" }

func (*createEvent) Description() string {
	return "Create an event in the user's calendar. Give a summary (title) and a start time in RFC 3339 with an offset; " +
		"the end defaults to one hour after the start. Returns the event's uid, start and end."
}

func (*createEvent) Schema() json.RawMessage { return json.RawMessage(createSchema) }

// Capability is medium: the event is visible to others who share the
// calendar, but Undo removes it.
func (*createEvent) Capability() tool.Capability { return tool.CapabilityMedium }

// eventResult is the JSON calendar_create_event answers with.
type eventResult struct {
	UID     string `json:"uid"`
	Href    string `json:"href"`
	Summary string `json:"summary"`
	Start   string `json:"start"`
	End     string `json:"end"`
}

// newEvent is a validated request to create an event.
type newEvent struct {
	uid, summary, description, location string
	start, end                          time.Time
}

// parseCreate decodes and checks the arguments; ok == false comes with an
// error Result naming the field.
func parseCreate(args json.RawMessage) (newEvent, tool.Result, bool) {
	var in struct {
		Summary     string `json:"summary"`
		Start       string `json:"start"`
		End         string `json:"end"`
		Description string `json:"description"`
		Location    string `json:"location"`
		UID         string `json:"uid"`
	}
	if res, ok := tool.DecodeArguments(json.RawMessage(createSchema), createExample, args, &in); !ok {
		return newEvent{}, res, false
	}
	ev := newEvent{uid: in.UID, summary: strings.TrimSpace(in.Summary), description: in.Description, location: strings.TrimSpace(in.Location)}
	if ev.summary == "" {
		return ev, tool.ErrorResult(`"summary" is blank: give the event a title, like "Dentist"`), false
	}
	for _, f := range []struct {
		name, value string
		multiline   bool
	}{{"summary", ev.summary, false}, {"location", ev.location, false}, {"description", ev.description, true}} {
		if msg := checkText(f.value, f.multiline); msg != "" {
			return ev, tool.ErrorResult("%q %s", f.name, msg), false
		}
	}
	ev.description = strings.ReplaceAll(ev.description, "\r\n", "\n")
	var err error
	if ev.start, err = time.Parse(time.RFC3339, in.Start); err != nil {
		return ev, tool.ErrorResult(`"start" %q is not an RFC 3339 time: write it like "2026-03-14T15:00:00+09:00"`, in.Start), false
	}
	ev.end = ev.start.Add(time.Hour)
	if in.End != "" {
		if ev.end, err = time.Parse(time.RFC3339, in.End); err != nil {
			return ev, tool.ErrorResult(`"end" %q is not an RFC 3339 time: write it like "2026-03-14T16:00:00+09:00", or leave it out for one hour`, in.End), false
		}
		if !ev.end.After(ev.start) {
			return ev, tool.ErrorResult(`"end" %s is not after "start" %s: give an end later than the start`, in.End, in.Start), false
		}
	}
	if ev.uid != "" && !uidPattern.MatchString(ev.uid) {
		return ev, tool.ErrorResult(`"uid" %q is not usable: at most 255 letters, digits and "@._-", starting with a letter or digit; or leave it out`, ev.uid), false
	}
	return ev, tool.Result{}, true
}

// checkText returns why s cannot be an iCalendar text value, or "".
// iCalendar forbids control characters in text; a line break in a
// one-line field would make the title unreadable in calendar apps.
func checkText(s string, multiline bool) string {
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r':
			if !multiline {
				return "must be one line: remove the line break"
			}
		case r == '\t':
		case unicode.IsControl(r):
			return fmt.Sprintf("contains the control character %U: remove it", r)
		}
	}
	return ""
}

// Call implements tool.Tool: it PUTs the event with If-None-Match: *, so
// that a UID already on the server is never overwritten; a 412 answer is
// a success when the existing event is the one we meant to create (a
// retried step) and an error result otherwise.
func (t *createEvent) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	ev, res, ok := parseCreate(args)
	if !ok {
		return res, nil
	}
	if ev.uid == "" {
		ev.uid = randomUID()
	}
	body, err := encodeEvent(ev, time.Now())
	if err != nil {
		return tool.ErrorResult("cannot write the event as iCalendar: %v", err), nil
	}
	c := t.cal
	path := c.objectPath(ev.uid)
	h := http.Header{"Content-Type": {ical.MIMEType + "; charset=utf-8"}, "If-None-Match": {"*"}}
	resp, err := c.do(ctx, http.MethodPut, path, h, body)
	if err != nil {
		return failure(ctx, http.MethodPut, path, err)
	}
	switch {
	case resp.status/100 == 2:
	case resp.status == http.StatusPreconditionFailed:
		if res, ok, err := t.sameEvent(ctx, path, ev); !ok || err != nil {
			return res, err
		}
	default:
		return statusFailure(http.MethodPut, path, resp), nil
	}
	out, err := json.Marshal(eventResult{
		UID: ev.uid, Href: path, Summary: ev.summary,
		Start: ev.start.Format(time.RFC3339), End: ev.end.Format(time.RFC3339),
	})
	if err != nil {
		return tool.Result{}, fmt.Errorf("caldav: encode result: %w", err)
	}
	return tool.Result{Content: string(out)}, nil
}

// sameEvent reads the event already at path and reports whether it has
// the summary, start and end of ev; ok == false comes with the error
// Result to return.
func (t *createEvent) sameEvent(ctx context.Context, path string, ev newEvent) (tool.Result, bool, error) {
	resp, err := t.cal.do(ctx, http.MethodGet, path, http.Header{"Accept": {ical.MIMEType}}, nil)
	if err != nil {
		res, err := failure(ctx, http.MethodGet, path, err)
		return res, false, err
	}
	if resp.status != http.StatusOK {
		return statusFailure(http.MethodGet, path, resp), false, nil
	}
	conflict := tool.ErrorResult("an event with uid %q already exists with different content: leave out \"uid\" to create a new event", ev.uid)
	cal, err := ical.NewDecoder(bytes.NewReader(resp.body)).Decode()
	if err != nil {
		return conflict, false, nil
	}
	for _, e := range cal.Events() {
		uid, _ := e.Props.Text(ical.PropUID)
		if uid != ev.uid {
			continue
		}
		summary, _ := e.Props.Text(ical.PropSummary)
		start, err1 := e.DateTimeStart(time.UTC)
		end, err2 := e.DateTimeEnd(time.UTC)
		if err1 == nil && err2 == nil && summary == ev.summary && start.Equal(ev.start) && end.Equal(ev.end) {
			return tool.Result{}, true, nil
		}
	}
	return conflict, false, nil
}

// encodeEvent writes ev as a VCALENDAR with one VEVENT. Times are written
// in UTC: an RFC 3339 offset names no time zone, and a TZID without a
// VTIMEZONE would not be understood.
func encodeEvent(ev newEvent, now time.Time) ([]byte, error) {
	e := ical.NewEvent()
	e.Props.SetText(ical.PropUID, ev.uid)
	e.Props.SetDateTime(ical.PropDateTimeStamp, now.UTC().Truncate(time.Second))
	e.Props.SetDateTime(ical.PropDateTimeStart, ev.start.UTC())
	e.Props.SetDateTime(ical.PropDateTimeEnd, ev.end.UTC())
	e.Props.SetText(ical.PropSummary, ev.summary)
	if ev.description != "" {
		e.Props.SetText(ical.PropDescription, ev.description)
	}
	if ev.location != "" {
		e.Props.SetText(ical.PropLocation, ev.location)
	}
	cal := ical.NewCalendar()
	cal.Props.SetText(ical.PropProductID, prodID)
	cal.Props.SetText(ical.PropVersion, "2.0")
	cal.Children = append(cal.Children, e.Component)
	var buf bytes.Buffer
	if err := ical.NewEncoder(&buf).Encode(cal); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// randomUID returns a fresh UID for a call without an idempotency key.
func randomUID() string {
	return rand.Text() + uidSuffix
}

// KeyUID returns the event UID that WithIdempotencyKey gives a step with
// the idempotency key key: the hex of the first 16 bytes of its SHA-256,
// followed by "@agentcraft".
func KeyUID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16]) + uidSuffix
}

// WithIdempotencyKey implements tool.KeyedArgs: it sets "uid" to
// KeyUID(key) unless args already carry one, keeping the other fields.
// Arguments that are not a JSON object are an error: Call would refuse
// them anyway.
func (*createEvent) WithIdempotencyKey(args json.RawMessage, key string) (json.RawMessage, error) {
	if key == "" {
		return nil, errors.New("caldav: calendar_create_event: idempotency key is empty")
	}
	// CheckArguments without a schema only repairs (a code fence, trailing
	// commas) and requires an object, as Call will.
	text, res, ok := tool.CheckArguments(nil, args)
	if !ok {
		return nil, fmt.Errorf("caldav: calendar_create_event: set idempotency key: %s", res.Content)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(text, &m); err != nil {
		return nil, fmt.Errorf("caldav: calendar_create_event: set idempotency key: %w", err)
	}
	if raw, ok := m["uid"]; ok {
		var uid string
		if json.Unmarshal(raw, &uid) != nil || uid != "" {
			// A uid of the caller's (or a wrong type Call reports) wins.
			return args, nil
		}
	}
	uid, _ := json.Marshal(KeyUID(key))
	m["uid"] = uid
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("caldav: calendar_create_event: set idempotency key: %w", err)
	}
	return out, nil
}

// undoPayload is what UndoOf returns and Undo reads.
type undoPayload struct {
	Href string `json:"href"`
	UID  string `json:"uid"`
}

// UndoOf implements tool.Undoable: the payload names the created event.
// An error result has no event to name and is an error.
func (*createEvent) UndoOf(_ json.RawMessage, res tool.Result) (json.RawMessage, error) {
	if res.IsError {
		return nil, errors.New("caldav: calendar_create_event: undo of: the call failed, so it created no event")
	}
	var r eventResult
	if err := json.Unmarshal([]byte(res.Content), &r); err != nil {
		return nil, fmt.Errorf("caldav: calendar_create_event: undo of: decode result: %w", err)
	}
	if r.Href == "" || r.UID == "" {
		return nil, errors.New("caldav: calendar_create_event: undo of: result has no href or uid")
	}
	return json.Marshal(undoPayload{Href: r.Href, UID: r.UID})
}

// Undo implements tool.Undoable: it deletes the event. An event already
// gone (404, 410) counts as undone, so compensation can be retried.
func (t *createEvent) Undo(ctx context.Context, payload json.RawMessage) error {
	var p undoPayload
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("caldav: calendar_create_event: undo: decode payload: %w", err)
	}
	if !utf8.ValidString(p.Href) || !t.cal.inCollection(p.Href) {
		return fmt.Errorf("caldav: calendar_create_event: undo: href %q is not in the calendar collection %s", p.Href, t.cal.collection.Path)
	}
	resp, err := t.cal.do(ctx, http.MethodDelete, p.Href, nil, nil)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("caldav: calendar_create_event: undo: DELETE %s: %w", p.Href, ctx.Err())
		}
		return fmt.Errorf("caldav: calendar_create_event: undo: DELETE %s: %s", p.Href, transportMessage(err))
	}
	switch {
	case resp.status/100 == 2, resp.status == http.StatusNotFound, resp.status == http.StatusGone:
		return nil
	}
	return fmt.Errorf("caldav: calendar_create_event: undo: DELETE %s: HTTP %d %s", p.Href, resp.status, http.StatusText(resp.status))
}
