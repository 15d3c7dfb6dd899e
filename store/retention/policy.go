// Package retention removes what the platform no longer needs to keep:
// the events and checkpoints of finished workflow runs, usage detail
// (through a rollup hook into daily totals), old uploads nothing live
// refers to, conversations by last activity, finished River jobs and,
// only when the operator sets a policy for it, audit rows.
//
// A Policy is the server's (agentcraft.yaml retention:); a workspace may
// override the kinds that belong to it (Overrides, GET/PUT
// /api/retention). The Pruner runs every kind in bounded batches, each
// batch its own short transaction, so a large prune never blocks the
// writer for long; Service runs it on a schedule and, on SQLite,
// checkpoints the WAL and gives freed pages back to the file system.
//
//	p, err := retention.New(db, &retention.Options{Policy: policy})
//	report, err := p.Run(ctx, false)
//	fmt.Print(report)
package retention

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind is one kind of data a policy keeps for a while.
type Kind string

// The kinds, in the order the Pruner removes them: conversations before
// uploads, so that an upload only an expired conversation referred to
// goes in the same run.
const (
	Conversations Kind = "conversations"
	Uploads       Kind = "uploads"
	RunEvents     Kind = "run_events"
	Checkpoints   Kind = "checkpoints"
	UsageDetail   Kind = "usage_detail"
	QueueJobs     Kind = "queue_jobs"
	Audit         Kind = "audit"
)

// Kinds lists every kind in pruning order.
var Kinds = []Kind{Conversations, Uploads, RunEvents, Checkpoints, UsageDetail, QueueJobs, Audit}

// PerWorkspace reports whether a workspace may override the server's
// policy for k. Usage detail is folded into server-wide totals, River's
// jobs belong to no workspace, and the audit trail is the operator's to
// shorten, never a workspace admin's.
func (k Kind) PerWorkspace() bool {
	switch k {
	case Conversations, Uploads, RunEvents, Checkpoints:
		return true
	}
	return false
}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool { return slices.Contains(Kinds, k) }

// Keep is the age that keeps a kind forever.
const Keep = "keep"

// MinAuditAge is the shortest audit policy: the database's trigger
// refuses to delete audit rows younger than a day whatever asks.
const MinAuditAge = 24 * time.Hour

// ParseAge reads a retention age: a number with a unit of d (days), w
// (weeks), h, m or s, or a Go duration ("36h30m"); "" and "keep" keep
// forever (0).
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == Keep {
		return 0, nil
	}
	if n, unit, ok := cutUnit(s); ok {
		v, err := strconv.ParseFloat(n, 64)
		if err == nil && v > 0 {
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not an age: use a positive number of days (30d), weeks (2w) or hours (12h), or %q", s, Keep)
	}
	return d, nil
}

func cutUnit(s string) (string, time.Duration, bool) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			return n, unit, true
		}
	}
	return "", 0, false
}

// FormatAge writes an age as ParseAge reads it: whole days as "30d",
// else a Go duration; 0 is "keep".
func FormatAge(d time.Duration) string {
	switch {
	case d <= 0:
		return Keep
	case d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// Policy is how long each kind is kept; a kind it lacks, or maps to 0,
// is kept forever.
type Policy map[Kind]time.Duration

// ParsePolicy reads a policy of kind → age (agentcraft.yaml retention:).
// An error names the kind.
func ParsePolicy(ages map[string]string) (Policy, error) {
	p := Policy{}
	var errs []error
	for k, v := range ages {
		kind := Kind(k)
		if !kind.Valid() {
			errs = append(errs, fmt.Errorf("%s: unknown kind; use one of %s", k, kindList()))
			continue
		}
		d, err := ParseAge(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
			continue
		}
		if kind == Audit && d > 0 && d < MinAuditAge {
			errs = append(errs, fmt.Errorf("%s: %s is under a day; audit rows are kept at least %s", k, v, FormatAge(MinAuditAge)))
			continue
		}
		if d > 0 {
			p[kind] = d
		}
	}
	return p, errors.Join(errs...)
}

func kindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}
