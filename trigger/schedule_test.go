package trigger

import (
	"errors"
	"testing"
	"time"
)

func mustSchedule(t *testing.T, spec, tz string) Schedule {
	t.Helper()
	s, err := ParseSchedule(spec, tz)
	if err != nil {
		t.Fatalf("ParseSchedule(%q, %q) = %v", spec, tz, err)
	}
	return s
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestScheduleTimeZone(t *testing.T) {
	for _, c := range []struct {
		name, spec, tz, from, want string
	}{
		// 09:00 in Tokyo (UTC+9, no DST) is 00:00 UTC.
		{"tokyo morning", "0 9 * * *", "Asia/Tokyo", "2026-03-10T01:00:00Z", "2026-03-11T00:00:00Z"},
		{"tokyo via CRON_TZ", "CRON_TZ=Asia/Tokyo 0 9 * * *", "", "2026-03-10T01:00:00Z", "2026-03-11T00:00:00Z"},
		// Weekdays are Tokyo's: Monday 08:30 JST is Sunday 23:30 UTC.
		{"tokyo weekday", "30 8 * * 1", "Asia/Tokyo", "2026-03-01T00:00:00Z", "2026-03-01T23:30:00Z"},
		{"utc default", "0 9 * * *", "", "2026-03-10T01:00:00Z", "2026-03-10T09:00:00Z"},
		// New York springs forward on 2026-03-08: 09:00 EDT is 13:00 UTC, the day before 14:00.
		{"dst before", "0 9 * * *", "America/New_York", "2026-03-07T00:00:00Z", "2026-03-07T14:00:00Z"},
		{"dst after", "0 9 * * *", "America/New_York", "2026-03-07T15:00:00Z", "2026-03-08T13:00:00Z"},
		{"seconds field", "*/15 * * * * *", "", "2026-03-10T01:00:07Z", "2026-03-10T01:00:15Z"},
		{"descriptor", "@hourly", "Asia/Tokyo", "2026-03-10T01:20:00Z", "2026-03-10T02:00:00Z"},
	} {
		got := mustSchedule(t, c.spec, c.tz).Next(utc(c.from))
		if !got.Equal(utc(c.want)) || got.Location() != time.UTC {
			t.Errorf("%s: Next(%s) = %v, want %s", c.name, c.from, got, c.want)
		}
	}
}

func TestParseScheduleNamesTheField(t *testing.T) {
	for _, c := range []struct{ spec, tz, field string }{
		{"", "", "schedule"},
		{"every day", "", "schedule"},
		{"61 * * * *", "", "schedule"},
		{"* * * * * * *", "", "schedule"},
		{"0 9 * * *", "Mars/Olympus", "timezone"},
		{"0 9 * * *", "Local", "timezone"},
		{"CRON_TZ=Nowhere/City 0 9 * * *", "", "timezone"},
		{"CRON_TZ=Asia/Tokyo 0 9 * * *", "UTC", "timezone"},
	} {
		_, err := ParseSchedule(c.spec, c.tz)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("ParseSchedule(%q, %q) = %v; want a FieldError on %s", c.spec, c.tz, err, c.field)
		}
	}
}

func TestLastAtOrBefore(t *testing.T) {
	hourly := mustSchedule(t, "0 * * * *", "")
	from := utc("2026-01-01T00:30:00Z")
	if got := hourly.lastAtOrBefore(from, utc("2026-01-01T05:59:59Z")); !got.Equal(utc("2026-01-01T05:00:00Z")) {
		t.Errorf("lastAtOrBefore = %v, want 05:00", got)
	}
	if got := hourly.lastAtOrBefore(from, utc("2026-01-01T00:59:00Z")); !got.IsZero() {
		t.Errorf("lastAtOrBefore with no tick = %v, want zero", got)
	}
	if n := hourly.countIn(from, utc("2026-01-01T05:59:59Z"), 100); n != 5 {
		t.Errorf("countIn = %d, want 5", n)
	}
	yearly := mustSchedule(t, "0 0 1 1 *", "")
	if got := yearly.lastAtOrBefore(utc("2020-06-01T00:00:00Z"), utc("2026-03-01T00:00:00Z")); !got.Equal(utc("2026-01-01T00:00:00Z")) {
		t.Errorf("yearly lastAtOrBefore = %v", got)
	}
}
