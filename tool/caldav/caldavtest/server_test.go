package caldavtest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/tool/caldav/caldavtest"
	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/caldav"
	"github.com/google/go-cmp/cmp"
)

const event = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:%s\r\nDTSTAMP:20260101T000000Z\r\n" +
	"DTSTART:%s\r\nDTEND:%s\r\nSUMMARY:%s\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

func put(t *testing.T, srv *caldavtest.Server, user, pass, uid, start, end, summary string, header map[string]string) int {
	t.Helper()
	body := strings.NewReader(fmt.Sprintf(event, uid, start, end, summary))
	req, err := http.NewRequest(http.MethodPut, srv.URL()+uid+".ics", body)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, pass)
	req.Header.Set("Content-Type", "text/calendar")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return status(t, req)
}

func status(t *testing.T, req *http.Request) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServerAtTheWire checks the behaviours package caldav relies on,
// as a real server shows them.
func TestServerAtTheWire(t *testing.T) {
	srv := caldavtest.New(t, "alice", "pw")
	if got := put(t, srv, "alice", "wrong", "a", "20260301T090000Z", "20260301T100000Z", "A", nil); got != http.StatusUnauthorized {
		t.Errorf("PUT with a wrong password = %d, want 401", got)
	}
	if got := put(t, srv, "alice", "pw", "a", "20260301T090000Z", "20260301T100000Z", "A", map[string]string{"If-None-Match": "*"}); got != http.StatusCreated {
		t.Errorf("PUT = %d, want 201", got)
	}
	if got := put(t, srv, "alice", "pw", "a", "20260301T090000Z", "20260301T100000Z", "B", map[string]string{"If-None-Match": "*"}); got != http.StatusPreconditionFailed {
		t.Errorf("PUT If-None-Match: * over an existing event = %d, want 412", got)
	}
	if got := put(t, srv, "alice", "pw", "b", "20260305T090000Z", "20260305T100000Z", "Later", nil); got != http.StatusCreated {
		t.Errorf("PUT b = %d, want 201", got)
	}
	if got, want := srv.Puts("a"), 2; got != want {
		t.Errorf("Puts(a) = %d, want %d (the unauthenticated one does not count)", got, want)
	}
	want := []caldavtest.Event{
		{UID: "a", Summary: "A", Start: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)},
		{UID: "b", Summary: "Later", Start: time.Date(2026, 3, 5, 9, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)},
	}
	if diff := cmp.Diff(want, srv.Events()); diff != "" {
		t.Errorf("Events (-want +got):\n%s", diff)
	}

	client, err := caldav.NewClient(webdav.HTTPClientWithBasicAuth(nil, "alice", "pw"), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	objs, err := client.QueryCalendar(ctx, "", &caldav.CalendarQuery{
		CompRequest: caldav.CalendarCompRequest{Name: ical.CompCalendar, AllProps: true, AllComps: true},
		CompFilter: caldav.CompFilter{Name: ical.CompCalendar, Comps: []caldav.CompFilter{{
			Name: ical.CompEvent, Start: time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC), End: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC),
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || !strings.HasSuffix(objs[0].Path, "/a.ics") {
		t.Errorf("query 09:30–24:00 on 1 March returned %+v, want only a.ics (overlapping the range start)", objs)
	}

	del := func() int {
		req, _ := http.NewRequest(http.MethodDelete, srv.URL()+"a.ics", nil)
		req.SetBasicAuth("alice", "pw")
		return status(t, req)
	}
	if got := del(); got != http.StatusNoContent {
		t.Errorf("DELETE = %d, want 204", got)
	}
	if got := del(); got != http.StatusNotFound {
		t.Errorf("DELETE again = %d, want 404", got)
	}
	if srv.Deletes("a") != 2 {
		t.Errorf("Deletes(a) = %d, want 2", srv.Deletes("a"))
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL()+"a.ics", nil)
	req.SetBasicAuth("alice", "pw")
	if got := status(t, req); got != http.StatusNotFound {
		t.Errorf("GET of a deleted event = %d, want 404", got)
	}
}
