package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCurrentTime(t *testing.T) {
	fixed := time.Date(2025, 3, 9, 23, 30, 0, 0, time.UTC) // a Sunday in UTC
	ct := CurrentTime{Now: func() time.Time { return fixed }}
	tests := []struct {
		args string
		want currentTime
	}{
		{``, currentTime{Time: "2025-03-09T23:30:00Z", Weekday: "Sunday", Timezone: "UTC", Offset: "+00:00"}},
		{`{}`, currentTime{Time: "2025-03-09T23:30:00Z", Weekday: "Sunday", Timezone: "UTC", Offset: "+00:00"}},
		{`{"timezone":"Asia/Tokyo"}`, currentTime{Time: "2025-03-10T08:30:00+09:00", Weekday: "Monday", Timezone: "Asia/Tokyo", Offset: "+09:00"}},
		{`{"timezone":"America/New_York"}`, currentTime{Time: "2025-03-09T19:30:00-04:00", Weekday: "Sunday", Timezone: "America/New_York", Offset: "-04:00"}},
	}
	for _, tt := range tests {
		res, err := ct.Call(context.Background(), json.RawMessage(tt.args))
		if err != nil || res.IsError {
			t.Fatalf("Call(%s) = %+v, %v", tt.args, res, err)
		}
		var got currentTime
		if err := json.Unmarshal([]byte(res.Content), &got); err != nil {
			t.Fatalf("Call(%s) content %q: %v", tt.args, res.Content, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Call(%s) (-want +got):\n%s", tt.args, diff)
		}
	}
}

func TestCurrentTimeRejects(t *testing.T) {
	for _, args := range []string{`{"timezone":"Mars/Olympus"}`, `{"timezone":"Local"}`, `{"timezone":"../../etc/passwd"}`, `{"timezone":3}`, `[`} {
		res, err := CurrentTime{}.Call(context.Background(), json.RawMessage(args))
		if err != nil {
			t.Fatalf("Call(%s) returned Go error %v", args, err)
		}
		if !res.IsError || !(strings.Contains(res.Content, "time zone") || strings.Contains(res.Content, "timezone")) {
			t.Errorf("Call(%s) = %+v, want an error result about the time zone", args, res)
		}
	}
}

func TestCurrentTimeDefaultClock(t *testing.T) {
	before := time.Now().Add(-time.Second)
	res, err := CurrentTime{}.Call(context.Background(), nil)
	if err != nil || res.IsError {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	var got currentTime
	if err := json.Unmarshal([]byte(res.Content), &got); err != nil {
		t.Fatal(err)
	}
	ts, err := time.Parse(time.RFC3339, got.Time)
	if err != nil || ts.Before(before.Truncate(time.Second)) || ts.After(time.Now().Add(time.Second)) {
		t.Errorf("time %q is not now (%v)", got.Time, err)
	}
}
