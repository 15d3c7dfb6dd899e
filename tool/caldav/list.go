package caldav

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav/caldav"

	"github.com/agentcraftlab/agentcraft/tool"
)

// Limits of calendar_list_events.
const (
	DefaultListLimit = 50
	MaxListLimit     = 200
	// MaxListSpan bounds the time range of one listing, so that a call
	// cannot ask the server for years of events.
	MaxListSpan = 366 * 24 * time.Hour
)

var listSchema = fmt.Sprintf(`{"type":"object","properties":{`+
	`"from":{"type":"string","minLength":1,"description":"Start of the range, RFC 3339, e.g. \"2026-03-01T00:00:00+09:00\"."},`+
	`"to":{"type":"string","minLength":1,"description":"End of the range, RFC 3339, after from, at most 366 days later."},`+
	`"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"Most events to return, earliest first. Default %d."}},`+
	`"required":["from","to"],"additionalProperties":false}`,
	MaxListLimit, DefaultListLimit)

const listExample = `{"from": "2026-03-01T00:00:00+09:00", "to": "2026-03-08T00:00:00+09:00"}`

// listEvents is the calendar_list_events tool.
type listEvents struct{ cal *Calendar }

var _ tool.Tool = (*listEvents)(nil)

func (*listEvents) Name() string { return "calendar_list_events" }

func (*listEvents) Description() string {
	return "List the events in the user's calendar that overlap a time range (from, to: RFC 3339, at most 366 days apart), earliest first. " +
		"Returns uid, summary, start, end and location of each, at most limit events (default 50, at most 200)."
}

func (*listEvents) Schema() json.RawMessage { return json.RawMessage(listSchema) }

// Capability is medium although the tool only reads: the calendar is
// private, and what it says leaves the user's hands when the model
// repeats it.
func (*listEvents) Capability() tool.Capability { return tool.CapabilityMedium }

// listedEvent is one element of the JSON array the tool answers with.
type listedEvent struct {
	UID      string `json:"uid"`
	Summary  string `json:"summary"`
	Start    string `json:"start"`
	End      string `json:"end"`
	Location string `json:"location,omitempty"`
	// AllDay marks an event given as dates: start and end are then
	// midnights (UTC) and end is exclusive.
	AllDay bool `json:"all_day,omitempty"`

	start time.Time
}

type listRequest struct {
	from, to time.Time
	limit    int
}

func parseList(args json.RawMessage) (listRequest, tool.Result, bool) {
	var in struct {
		From  string `json:"from"`
		To    string `json:"to"`
		Limit *int   `json:"limit"`
	}
	if res, ok := tool.DecodeArguments(json.RawMessage(listSchema), listExample, args, &in); !ok {
		return listRequest{}, res, false
	}
	var r listRequest
	var err error
	if r.from, err = time.Parse(time.RFC3339, in.From); err != nil {
		return r, tool.ErrorResult(`"from" %q is not an RFC 3339 time: write it like "2026-03-01T00:00:00+09:00"`, in.From), false
	}
	if r.to, err = time.Parse(time.RFC3339, in.To); err != nil {
		return r, tool.ErrorResult(`"to" %q is not an RFC 3339 time: write it like "2026-03-08T00:00:00+09:00"`, in.To), false
	}
	if !r.to.After(r.from) {
		return r, tool.ErrorResult(`"to" %s is not after "from" %s: give a range that ends after it starts`, in.To, in.From), false
	}
	if r.to.Sub(r.from) > MaxListSpan {
		return r, tool.ErrorResult(`the range from %s to %s is longer than 366 days: narrow "from" and "to", or list in several calls`, in.From, in.To), false
	}
	r.limit = DefaultListLimit
	if in.Limit != nil {
		r.limit = *in.Limit // the schema bounds it to 1..MaxListLimit
	}
	return r, tool.Result{}, true
}

// Call implements tool.Tool with a calendar-query REPORT whose
// time-range filter the server applies.
func (t *listEvents) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	r, res, ok := parseList(args)
	if !ok {
		return res, nil
	}
	c := t.cal
	query := &caldav.CalendarQuery{
		// Only what we report, so that a calendar of long descriptions
		// stays under MaxResponseBytes.
		CompRequest: caldav.CalendarCompRequest{
			Name:  ical.CompCalendar,
			Props: []string{ical.PropVersion},
			Comps: []caldav.CalendarCompRequest{{
				Name: ical.CompEvent,
				Props: []string{
					ical.PropUID, ical.PropSummary, ical.PropDateTimeStart, ical.PropDateTimeEnd,
					ical.PropDuration, ical.PropLocation, ical.PropRecurrenceID,
				},
			}},
		},
		CompFilter: caldav.CompFilter{
			Name: ical.CompCalendar,
			// go-webdav writes the range without converting to UTC, so it
			// must be given in UTC.
			Comps: []caldav.CompFilter{{Name: ical.CompEvent, Start: r.from.UTC(), End: r.to.UTC()}},
		},
	}
	objs, err := c.dav.QueryCalendar(ctx, c.collection.Path, query)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, fmt.Errorf("caldav: REPORT %s: %w", c.collection.Path, ctx.Err())
		}
		// go-webdav's errors begin with the status ("401 Unauthorized: …").
		msg := transportMessage(err)
		if errors.Is(err, errTooLarge) {
			msg += `: narrow "from" and "to"`
		}
		return tool.ErrorResult("calendar server: REPORT %s failed: %s", c.collection.Path, msg), nil
	}
	events := []listedEvent{}
	for _, o := range objs {
		if o.Data == nil {
			continue
		}
		for _, e := range o.Data.Events() {
			if le, ok := readEvent(e); ok {
				events = append(events, le)
			}
		}
	}
	slices.SortStableFunc(events, func(a, b listedEvent) int {
		return cmp.Or(a.start.Compare(b.start), strings.Compare(a.UID, b.UID))
	})
	if len(events) > r.limit {
		events = events[:r.limit]
	}
	out, err := json.Marshal(events)
	if err != nil {
		return tool.Result{}, fmt.Errorf("caldav: encode events: %w", err)
	}
	return tool.Result{Content: string(out)}, nil
}

// readEvent reports one VEVENT; ok is false for one without a readable
// start, which cannot be placed in the list (one bad event of another
// client must not fail the whole listing).
func readEvent(e ical.Event) (listedEvent, bool) {
	startProp := e.Props.Get(ical.PropDateTimeStart)
	if startProp == nil {
		return listedEvent{}, false
	}
	start, err := propTime(startProp)
	if err != nil {
		return listedEvent{}, false
	}
	allDay := startProp.ValueType() == ical.ValueDate || len(startProp.Value) == len("20060102")
	end := start
	switch endProp := e.Props.Get(ical.PropDateTimeEnd); {
	case endProp != nil:
		if t, err := propTime(endProp); err == nil && !t.Before(start) {
			end = t
		}
	default:
		if t, err := e.DateTimeEnd(time.UTC); err == nil && !t.Before(start) {
			end = t
		}
	}
	uid, _ := e.Props.Text(ical.PropUID)
	summary, _ := e.Props.Text(ical.PropSummary)
	location, _ := e.Props.Text(ical.PropLocation)
	return listedEvent{
		UID: uid, Summary: summary, Location: location, AllDay: allDay,
		Start: start.Format(time.RFC3339), End: end.Format(time.RFC3339), start: start,
	}, true
}

// propTime reads a DATE or DATE-TIME property. A TZID the system does not
// know (Outlook writes Windows zone names) is read as UTC rather than
// dropping the event.
func propTime(p *ical.Prop) (time.Time, error) {
	t, err := p.DateTime(time.UTC)
	if err == nil {
		return t, nil
	}
	if t, err2 := time.ParseInLocation("20060102T150405", p.Value, time.UTC); err2 == nil {
		return t, nil
	}
	return time.Time{}, err
}
