package caldav_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/caldav"
)

type listed struct {
	UID      string `json:"uid"`
	Summary  string `json:"summary"`
	Start    string `json:"start"`
	End      string `json:"end"`
	Location string `json:"location"`
	AllDay   bool   `json:"all_day"`
}

func listOf(t *testing.T, res tool.Result) []listed {
	t.Helper()
	if res.IsError {
		t.Fatalf("list = %+v", res)
	}
	var l []listed
	if err := json.Unmarshal([]byte(res.Content), &l); err != nil {
		t.Fatalf("list result %q is not a JSON array: %v", res.Content, err)
	}
	return l
}

// TestListEvents: only events overlapping the range come back, earliest
// first, whatever order they were created in.
func TestListEvents(t *testing.T) {
	e := newEnv(t)
	for _, args := range []string{
		`{"uid":"after","summary":"After","start":"2026-03-09T09:00:00Z"}`,
		`{"uid":"late","summary":"Late","start":"2026-03-06T09:00:00+09:00","location":"Office"}`,
		`{"uid":"before","summary":"Before","start":"2026-02-27T09:00:00Z"}`,
		`{"uid":"early","summary":"Early","start":"2026-03-02T09:00:00Z","end":"2026-03-02T09:30:00Z"}`,
		`{"uid":"straddle","summary":"Straddle","start":"2026-02-28T23:00:00Z","end":"2026-03-01T01:00:00Z"}`,
	} {
		if res := call(t, e.create, args); res.IsError {
			t.Fatalf("create %s = %+v", args, res)
		}
	}
	got := listOf(t, call(t, e.list, `{"from":"2026-03-01T00:00:00Z","to":"2026-03-08T00:00:00Z"}`))
	want := []listed{
		{UID: "straddle", Summary: "Straddle", Start: "2026-02-28T23:00:00Z", End: "2026-03-01T01:00:00Z"},
		{UID: "early", Summary: "Early", Start: "2026-03-02T09:00:00Z", End: "2026-03-02T09:30:00Z"},
		{UID: "late", Summary: "Late", Start: "2026-03-06T00:00:00Z", End: "2026-03-06T01:00:00Z", Location: "Office"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}

	got = listOf(t, call(t, e.list, `{"from":"2026-03-01T00:00:00Z","to":"2026-03-08T00:00:00Z","limit":2}`))
	if diff := cmp.Diff(want[:2], got); diff != "" {
		t.Errorf("list with limit 2 (-want +got):\n%s", diff)
	}

	// An offset in the range is honoured: 2026-03-06T00:00Z is 09:00 in Tokyo.
	got = listOf(t, call(t, e.list, `{"from":"2026-03-06T08:00:00+09:00","to":"2026-03-06T10:00:00+09:00"}`))
	if len(got) != 1 || got[0].UID != "late" {
		t.Errorf("list 08:00–10:00 Tokyo on 6 March = %+v, want only \"late\"", got)
	}

	res := call(t, e.list, `{"from":"2030-01-01T00:00:00Z","to":"2030-01-02T00:00:00Z"}`)
	if res.IsError || res.Content != "[]" {
		t.Errorf("list of an empty range = %+v, want []", res)
	}
}

func TestListEventsBadArgs(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct{ args, want string }{
		{`{"to":"2026-03-08T00:00:00Z"}`, `"from"`},
		{`{"from":"2026-03-01T00:00:00Z"}`, `"to"`},
		{`{"from":"March 1st","to":"2026-03-08T00:00:00Z"}`, `"from" "March 1st" is not an RFC 3339 time`},
		{`{"from":"2026-03-01T00:00:00Z","to":"2026-03-08"}`, `"to" "2026-03-08" is not an RFC 3339 time`},
		{`{"from":"2026-03-08T00:00:00Z","to":"2026-03-01T00:00:00Z"}`, `"to" 2026-03-01T00:00:00Z is not after "from"`},
		{`{"from":"2026-01-01T00:00:00Z","to":"2027-01-03T00:00:00Z"}`, `longer than 366 days`},
		{`{"from":"2026-03-01T00:00:00Z","to":"2026-03-08T00:00:00Z","limit":500}`, `"limit"`},
		{`{"from":"2026-03-01T00:00:00Z","to":"2026-03-08T00:00:00Z","limit":0}`, `"limit"`},
		{`{"from":"2026-03-01T00:00:00Z","to":"2026-03-08T00:00:00Z","max":5}`, `unknown argument "max"`},
	} {
		res := call(t, e.list, tt.args)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("list %s = %+v, want an error result containing %q", tt.args, res, tt.want)
		}
	}
	// The longest range allowed is accepted.
	if res := call(t, e.list, `{"from":"2028-01-01T00:00:00Z","to":"2029-01-01T00:00:00Z"}`); res.IsError {
		t.Errorf("list of 366 days = %+v, want success", res)
	}
}

// TestListReadsForeignEvents: events other clients wrote (all-day
// dates, DURATION instead of DTEND, zones) are listed, not dropped.
func TestListReadsForeignEvents(t *testing.T) {
	const body = `<?xml version="1.0" encoding="UTF-8"?>
<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
 <d:response><d:href>/cal/a.ics</d:href><d:propstat><d:prop><c:calendar-data>BEGIN:VCALENDAR
VERSION:2.0
BEGIN:VEVENT
UID:allday
SUMMARY:Holiday
DTSTART;VALUE=DATE:20260303
END:VEVENT
END:VCALENDAR
</c:calendar-data></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
 <d:response><d:href>/cal/b.ics</d:href><d:propstat><d:prop><c:calendar-data>BEGIN:VCALENDAR
VERSION:2.0
BEGIN:VEVENT
UID:zoned
SUMMARY:Call
DTSTART;TZID=Asia/Tokyo:20260302T090000
DURATION:PT30M
END:VEVENT
BEGIN:VEVENT
UID:windows
SUMMARY:Outlook
DTSTART;TZID=Tokyo Standard Time:20260301T100000
DTEND;TZID=Tokyo Standard Time:20260301T110000
END:VEVENT
END:VCALENDAR
</c:calendar-data></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
</d:multistatus>`
	var gotRange string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotRange = string(b)
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(http.StatusMultiStatus)
		w.Write([]byte(strings.ReplaceAll(body, "\n", "\r\n")))
	}))
	defer srv.Close()
	cal, err := caldav.New(caldav.Config{URL: srv.URL + "/cal/"})
	if err != nil {
		t.Fatal(err)
	}
	_, list := toolsOf(t, cal)
	got := listOf(t, call(t, list, `{"from":"2026-03-01T09:00:00+09:00","to":"2026-03-08T00:00:00+09:00"}`))
	want := []listed{
		{UID: "windows", Summary: "Outlook", Start: "2026-03-01T10:00:00Z", End: "2026-03-01T11:00:00Z"},
		{UID: "zoned", Summary: "Call", Start: "2026-03-02T09:00:00+09:00", End: "2026-03-02T09:30:00+09:00"},
		{UID: "allday", Summary: "Holiday", Start: "2026-03-03T00:00:00Z", End: "2026-03-04T00:00:00Z", AllDay: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	// The range goes out in UTC, as RFC 4791 requires.
	if !strings.Contains(gotRange, `start="20260301T000000Z"`) || !strings.Contains(gotRange, `end="20260307T150000Z"`) {
		t.Errorf("REPORT body %s: want the time range in UTC", gotRange)
	}
}

// TestContextCancellation: a cancelled or expired context stops a call
// at once and comes back as the context's error, not as a result.
func TestContextCancellation(t *testing.T) {
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices the client hanging up only once the body
		// is read.
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer stalled.Close()
	cal, err := caldav.New(caldav.Config{URL: stalled.URL + "/cal/"})
	if err != nil {
		t.Fatal(err)
	}
	create, list := toolsOf(t, cal)
	calls := map[string]func(ctx context.Context) error{
		"create": func(ctx context.Context) error {
			_, err := create.Call(ctx, json.RawMessage(`{"summary":"x","start":"2026-03-14T09:00:00Z"}`))
			return err
		},
		"list": func(ctx context.Context) error {
			_, err := list.Call(ctx, json.RawMessage(`{"from":"2026-03-01T00:00:00Z","to":"2026-03-08T00:00:00Z"}`))
			return err
		},
		"undo": func(ctx context.Context) error {
			return create.Undo(ctx, json.RawMessage(`{"href":"/cal/x.ics","uid":"x"}`))
		},
	}
	for name, f := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		began := time.Now()
		err := f(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s on a stalled server: err = %v, want context.DeadlineExceeded", name, err)
		}
		if d := time.Since(began); d > 5*time.Second {
			t.Errorf("%s took %v after its deadline", name, d)
		}
		ctx, cancel = context.WithCancel(context.Background())
		cancel()
		if err := f(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: err = %v, want context.Canceled", name, err)
		}
	}
}
