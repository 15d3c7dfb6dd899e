package tool

import (
	"context"
	"encoding/json"
	"time"
)

// CurrentTime is the built-in "current_time" tool: it tells the model the
// date and time in a time zone. The zero value reads the system clock.
//
// Zones are looked up in the system's zoneinfo database; a binary meant
// for minimal containers should import time/tzdata.
type CurrentTime struct {
	// Now returns the current time. Default: time.Now. Tests fix it.
	Now func() time.Time
}

var _ Tool = CurrentTime{}

// Name implements Tool.
func (CurrentTime) Name() string { return "current_time" }

// Description implements Tool.
func (CurrentTime) Description() string {
	return "Get the current date, time and weekday. Pass an IANA time zone such as \"Asia/Tokyo\" or \"Europe/Paris\"; the default is UTC."
}

var currentTimeArgs = mustArgSchema("current_time",
	`{"type":"object","properties":{"timezone":{"type":"string","description":"IANA time zone name, e.g. \"America/New_York\". Default: UTC."}},"additionalProperties":false}`,
	`{"timezone": "Asia/Tokyo"}`)

// Schema implements Tool.
func (CurrentTime) Schema() json.RawMessage { return currentTimeArgs.raw }

// Capability implements Tool.
func (CurrentTime) Capability() Capability { return CapabilityLow }

// currentTime is the JSON the tool answers with.
type currentTime struct {
	Time     string `json:"time"`
	Weekday  string `json:"weekday"`
	Timezone string `json:"timezone"`
	Offset   string `json:"utc_offset"`
}

// Call implements Tool. An unknown zone is an error Result.
func (c CurrentTime) Call(_ context.Context, args json.RawMessage) (Result, error) {
	var in struct {
		Timezone string `json:"timezone"`
	}
	if res, ok := currentTimeArgs.parse(args, &in); !ok {
		return res, nil
	}
	name := in.Timezone
	if name == "" {
		name = "UTC"
	}
	// "Local" would reveal the server's zone and is not an IANA name.
	if name == "Local" {
		return ErrorResult(`unknown time zone "Local": use an IANA name such as "Europe/Berlin" or "UTC"`), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return ErrorResult("unknown time zone %q: use an IANA name such as \"Europe/Berlin\", \"America/New_York\" or \"UTC\"", name), nil
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	t := now().In(loc)
	b, err := json.Marshal(currentTime{
		Time:     t.Format(time.RFC3339),
		Weekday:  t.Weekday().String(),
		Timezone: name,
		Offset:   t.Format("-07:00"),
	})
	if err != nil {
		return Result{}, err // cannot happen: plain strings
	}
	return Result{Content: string(b)}, nil
}
