package trigger

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones on hosts without /usr/share/zoneinfo

	"github.com/robfig/cron/v3"

	"github.com/agentcraftlab/agentcraft/store"
)

// parser reads five-field specs (minute hour day month weekday), six with
// a leading seconds field, and the descriptors (@hourly, @every 5m …).
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Schedule is a parsed cron spec read in a time zone.
type Schedule struct {
	s   cron.Schedule
	loc *time.Location
}

// ParseSchedule parses spec in the IANA zone tz ("" is UTC, unless spec
// starts with CRON_TZ=<zone>, which then names it). Daylight-saving
// changes are the library's: a tick in a skipped hour fires once at the
// jump, a repeated hour fires once. The error is a *FieldError naming
// schedule or timezone.
func ParseSchedule(spec, tz string) (Schedule, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return Schedule{}, &FieldError{Field: "schedule", Message: `schedule is empty; give a cron spec such as "0 9 * * 1-5" (minute hour day month weekday, with an optional leading seconds field)`}
	}
	tz = strings.TrimSpace(tz)
	if strings.HasPrefix(spec, "CRON_TZ=") || strings.HasPrefix(spec, "TZ=") {
		if tz != "" {
			return Schedule{}, &FieldError{Field: "timezone", Message: "the schedule names its zone with CRON_TZ= and timezone is set too; keep one of them"}
		}
		zone, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(spec, "CRON_"), "TZ="), " ")
		tz = zone
		_, spec, _ = strings.Cut(spec, " ")
	}
	loc := time.UTC
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil || tz == "Local" {
			return Schedule{}, &FieldError{Field: "timezone", Message: fmt.Sprintf("time zone %q is unknown; use an IANA name such as \"Asia/Tokyo\" or \"UTC\"", tz)}
		}
		loc = l
	}
	s, err := parser.Parse(strings.TrimSpace(spec))
	if err != nil {
		return Schedule{}, &FieldError{Field: "schedule", Message: fmt.Sprintf("schedule %q is not a cron spec: %v; use minute hour day month weekday, optionally a leading seconds field, or @hourly, @daily, @every 10m", spec, err)}
	}
	return Schedule{s: s, loc: loc}, nil
}

// Next returns the first tick strictly after t, in UTC; the zero time when
// there is none.
func (s Schedule) Next(t time.Time) time.Time {
	n := s.s.Next(t.In(s.loc))
	if n.IsZero() {
		return n
	}
	return n.UTC()
}

// NextFire is when an enabled schedule trigger fires next after now, in
// UTC; false for a webhook, a disabled trigger or a spec that no longer
// parses (the scheduler skips it too) or never fires again.
func NextFire(t store.Trigger, now time.Time) (time.Time, bool) {
	if t.Kind != store.TriggerSchedule || !t.Enabled {
		return time.Time{}, false
	}
	s, err := ParseSchedule(t.Schedule, t.Timezone)
	if err != nil {
		return time.Time{}, false
	}
	n := s.Next(now)
	return n, !n.IsZero()
}

// lastAtOrBefore returns the latest tick in (from, until], or the zero time
// for none. Cron has no "previous", so it widens a window back from until
// (1 s, 2 s, 4 s …) until the window holds a tick, then walks forward:
// a few steps whatever the schedule's period.
func (s Schedule) lastAtOrBefore(from, until time.Time) time.Time {
	for d := time.Second; ; d *= 2 {
		start := until.Add(-d)
		if !start.After(from) {
			start = from
		}
		t := s.Next(start)
		if !t.IsZero() && !t.After(until) {
			for {
				n := s.Next(t)
				if n.IsZero() || n.After(until) {
					return t
				}
				t = n
			}
		}
		if start.Equal(from) {
			return time.Time{}
		}
	}
}

// countIn counts the ticks in (from, until], stopping at limit.
func (s Schedule) countIn(from, until time.Time, limit int) int {
	n := 0
	for t := s.Next(from); !t.IsZero() && !t.After(until) && n < limit; t = s.Next(t) {
		n++
	}
	return n
}
