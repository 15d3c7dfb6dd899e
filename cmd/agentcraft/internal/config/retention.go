package config

import (
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/store/retention"
)

// Retention is how long the server keeps each kind of data (package
// store/retention). Every age is a number of days ("30d"), weeks ("2w")
// or a duration ("12h"); empty or "keep" keeps forever, which is every
// kind's default: nothing is deleted until the operator says so.
// Workspaces override run_events, checkpoints, uploads and conversations
// for themselves through PUT /api/retention.
type Retention struct {
	// RunEvents and Checkpoints: the events and checkpoints of runs that
	// finished (succeeded, failed, canceled, blocked) longer ago; the run
	// rows stay. Live and waiting runs keep everything.
	RunEvents   string `yaml:"run_events"`
	Checkpoints string `yaml:"checkpoints"`
	// UsageDetail: usage records older than this are folded into daily
	// totals (the usage rollup) and deleted.
	UsageDetail string `yaml:"usage_detail"`
	// Uploads: uploads created longer ago that no live ingest job, live
	// run or kept conversation refers to.
	Uploads string `yaml:"uploads"`
	// Conversations: conversations (with their messages and conversation
	// memories) whose last activity is older.
	Conversations string `yaml:"conversations"`
	// QueueJobs: finished River jobs (completed, cancelled, discarded).
	// Empty keeps River's defaults (completed and cancelled 24h,
	// discarded 7d); "keep" keeps them forever.
	QueueJobs string `yaml:"queue_jobs"`
	// Audit: audit rows older than this (at least 1d). Empty (the
	// default) keeps the audit log forever; the database refuses every
	// other delete of it.
	Audit string `yaml:"audit"`
	// Interval is how often serve (and workers, on PostgreSQL: one at a
	// time) prune. Default 1h.
	Interval time.Duration `yaml:"interval"`
	// CheckpointInterval is how often SQLite's WAL is checkpointed and
	// truncated. Default 5m.
	CheckpointInterval time.Duration `yaml:"checkpoint_interval"`
}

// Ages returns kind → age as written.
func (r Retention) Ages() map[string]string {
	m := map[string]string{}
	for k, v := range map[retention.Kind]string{
		retention.RunEvents: r.RunEvents, retention.Checkpoints: r.Checkpoints, retention.UsageDetail: r.UsageDetail,
		retention.Uploads: r.Uploads, retention.Conversations: r.Conversations, retention.QueueJobs: r.QueueJobs, retention.Audit: r.Audit,
	} {
		if v != "" {
			m[string(k)] = v
		}
	}
	return m
}

// Policy returns the server's retention policy.
func (r Retention) Policy() (retention.Policy, error) { return retention.ParsePolicy(r.Ages()) }

// QueueJobRetention is queue.Config.JobRetention: 0 for River's
// defaults, -1 to keep, else the age.
func (r Retention) QueueJobRetention() time.Duration {
	switch r.QueueJobs {
	case "":
		return 0
	case retention.Keep:
		return -1
	}
	d, _ := retention.ParseAge(r.QueueJobs)
	return d
}

func (r Retention) validate(bad func(path, format string, args ...any)) {
	for k, v := range r.Ages() {
		if _, err := retention.ParsePolicy(map[string]string{k: v}); err != nil {
			bad("retention."+k, "%v", unwrapKind(err, k))
		}
	}
	if r.Interval < 0 {
		bad("retention.interval", "%v is negative; set a positive duration such as 1h", r.Interval)
	}
	if r.CheckpointInterval < 0 {
		bad("retention.checkpoint_interval", "%v is negative; set a positive duration such as 5m", r.CheckpointInterval)
	}
}

// unwrapKind drops the "kind: " prefix ParsePolicy puts before its
// message, since the path names the key already.
func unwrapKind(err error, kind string) string {
	s := err.Error()
	if p := kind + ": "; len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return fmt.Sprint(s)
}
