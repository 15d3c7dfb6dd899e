package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/pricing"
)

// Status is the outcome of a model request.
type Status string

// Request outcomes.
const (
	StatusOK    Status = "ok"
	StatusError Status = "error"
)

// UsageRecord is one model request: who asked, what it cost, how long it took.
type UsageRecord struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// APIKeyID is the key that authenticated the request; empty for
	// requests from the studio or internal jobs.
	APIKeyID string `json:"api_key_id,omitempty"`
	Agent    string `json:"agent,omitempty"`
	Model    string `json:"model"`
	Provider string `json:"provider"`
	// User attributes the request to an end user of a front end, such as
	// the Open WebUI user id or email, when the client says who it is.
	User         string `json:"user,omitempty"`
	InputTokens  int    `json:"input_tokens"`
	OutputTokens int    `json:"output_tokens"`
	// CachedTokens is the part of InputTokens served from the provider's
	// prompt cache.
	CachedTokens int `json:"cached_tokens"`
	// LatencyMs is the whole request as the client saw it; UpstreamMs the
	// part spent waiting on the provider.
	LatencyMs  int    `json:"latency_ms"`
	UpstreamMs int    `json:"upstream_ms"`
	Status     Status `json:"status"`
	// ErrorKind is the llm error kind of a failed request.
	ErrorKind string `json:"error_kind,omitempty"`
	// Surface is the way the agent was run: "openai" (/v1), "chat"
	// (/api/chat), "mcp", "a2a", "workflow" (an agent node), …
	Surface string `json:"surface,omitempty"`
	// Actor is who asked: "apikey:<id>", "oauth:<client id>",
	// "user:<id>" or "system:<name>" (a worker running a workflow).
	Actor string `json:"actor,omitempty"`
	// RunID is the workflow run an agent node ran in.
	RunID string `json:"run_id,omitempty"`
	// Workflow names the workflow whose run the request belonged to.
	Workflow string `json:"workflow,omitempty"`
	// Cost is what the request cost at the price table's prices (cached
	// input at the cached price); zero and Unpriced when the table does
	// not price the model.
	Cost     pricing.Money `json:"cost"`
	Unpriced bool          `json:"unpriced,omitempty"`
	// CreatedAt is when the request happened; Record stamps the current
	// time when it is zero.
	CreatedAt time.Time `json:"created_at"`
}

// Validate reports whether r can be written.
func (r UsageRecord) Validate() error {
	switch {
	case r.WorkspaceID == "":
		return fmt.Errorf("%w: usage record workspace id is empty; set UsageRecord.WorkspaceID", ErrInvalid)
	case r.Status != StatusOK && r.Status != StatusError:
		return fmt.Errorf("%w: usage record status is %q; set UsageRecord.Status to %q or %q",
			ErrInvalid, r.Status, StatusOK, StatusError)
	case r.InputTokens < 0 || r.OutputTokens < 0 || r.CachedTokens < 0:
		return fmt.Errorf("%w: usage record has negative token counts (%d in, %d out, %d cached)",
			ErrInvalid, r.InputTokens, r.OutputTokens, r.CachedTokens)
	case r.Cost < 0:
		return fmt.Errorf("%w: usage record cost is negative (%d nano-units)", ErrInvalid, r.Cost)
	case r.LatencyMs < 0 || r.UpstreamMs < 0:
		return fmt.Errorf("%w: usage record has negative latency (%d ms total, %d ms upstream)",
			ErrInvalid, r.LatencyMs, r.UpstreamMs)
	}
	return nil
}

// UsageSummary totals the usage of one agent and model.
type UsageSummary struct {
	Agent    string `json:"agent"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Requests counts every record; Errors those with StatusError.
	Requests     int64 `json:"requests"`
	Errors       int64 `json:"errors"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CachedTokens int64 `json:"cached_tokens"`
	// LatencyMs and UpstreamMs are sums; divide by Requests for the mean.
	LatencyMs  int64 `json:"latency_ms"`
	UpstreamMs int64 `json:"upstream_ms"`
	// Cost sums the records' costs; Unpriced counts the records whose
	// model the price table did not price (their cost is not in Cost).
	Cost     pricing.Money `json:"cost"`
	Unpriced int64         `json:"unpriced_requests"`
}

// UsageGroup is what Usage.SummaryBy totals usage per.
type UsageGroup string

// The groups of Usage.SummaryBy.
const (
	// UsageByDay totals per calendar day in UTC, keyed "2006-01-02".
	UsageByDay UsageGroup = "day"
	// UsageByAgent totals per agent name; requests that named a model
	// rather than an agent have the empty key.
	UsageByAgent UsageGroup = "agent"
	// UsageByWorkflow totals per workflow; requests that were not part of
	// a workflow run have the empty key.
	UsageByWorkflow UsageGroup = "workflow"
	// UsageByUser totals per end user (UsageRecord.User); requests whose
	// client named nobody have the empty key.
	UsageByUser UsageGroup = "user"
	// UsageByAPIKey totals per API key id; requests not made with a key
	// have the empty key.
	UsageByAPIKey UsageGroup = "api_key"
	// UsageByActor totals per UsageRecord.Actor ("user:<id>",
	// "apikey:<id>", …); records without an actor have the empty key.
	UsageByActor UsageGroup = "actor"
	// UsageByModel totals per provider and model, keyed "provider/model"
	// as agents name a model.
	UsageByModel UsageGroup = "model"
)

// UsageGroups lists every UsageGroup, in the order people read them.
var UsageGroups = []UsageGroup{UsageByDay, UsageByAgent, UsageByWorkflow, UsageByUser, UsageByAPIKey, UsageByActor, UsageByModel}

// Valid reports whether g is one of UsageGroups.
func (g UsageGroup) Valid() bool {
	switch g {
	case UsageByDay, UsageByAgent, UsageByWorkflow, UsageByUser, UsageByAPIKey, UsageByActor, UsageByModel:
		return true
	}
	return false
}

// UsageTotal totals the usage of one group of a UsageGroup.
type UsageTotal struct {
	// Key names the group: a day, an agent, a workflow, an end user, an
	// API key id, an actor or a provider/model, as the UsageGroup says.
	Key string `json:"key"`
	// Requests counts every record; Errors those with StatusError.
	Requests     int64 `json:"requests"`
	Errors       int64 `json:"errors"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CachedTokens int64 `json:"cached_tokens"`
	// LatencyMs and UpstreamMs are sums; divide by Requests for the mean.
	LatencyMs  int64 `json:"latency_ms"`
	UpstreamMs int64 `json:"upstream_ms"`
	// Cost sums the records' costs; Unpriced counts the records whose
	// model the price table did not price (their cost is not in Cost).
	Cost     pricing.Money `json:"cost"`
	Unpriced int64         `json:"unpriced_requests"`
}

// DefaultUsageLimit is how many records Usage.List returns when its limit
// is zero or negative.
const DefaultUsageLimit = 100

// Usage stores usage records. Record is called once per model request from
// many goroutines at once; drivers must accept that without losing records
// or failing with lock errors.
type Usage interface {
	// Record appends the records in one transaction, assigning an ID to
	// each whose ID is empty: all are stored or none. Recording many at
	// once is how a busy server keeps up (one commit for a batch). An
	// unknown
	// workspace gives ErrNotFound.
	Record(ctx context.Context, records ...UsageRecord) error
	// List returns the workspace's records created at or after since,
	// newest first, at most limit of them (DefaultUsageLimit when limit <= 0).
	List(ctx context.Context, workspaceID string, since time.Time, limit int) ([]UsageRecord, error)
	// Summary totals the workspace's records created at or after since per
	// agent, provider and model, ordered by those three. Summary and
	// SummaryBy count rolled-up history (Rollup) with the detail rows:
	// their totals are the same before and after a rollup for a since at
	// the start of a UTC day (or zero); a rolled-up day counts only when
	// since is at or before its start.
	Summary(ctx context.Context, workspaceID string, since time.Time) ([]UsageSummary, error)
	// SummaryBy totals the workspace's records created at or after since
	// per group of by, ordered bytewise by key (days, so, oldest first).
	// A by that is not one of UsageGroups gives ErrInvalid.
	SummaryBy(ctx context.Context, workspaceID string, since time.Time, by UsageGroup) ([]UsageTotal, error)
	// Spend is the workspace's running count of the UTC month holding
	// month: tokens (input + output), cost and requests recorded for that
	// month since its start or the last budget reset (Budgets.Reset). It
	// reads one row, never the usage records: budget checks call it.
	Spend(ctx context.Context, workspaceID string, month time.Time) (UsageSpend, error)
	// Rollup folds every workspace's records created before before into
	// daily totals (per UTC day, agent, workflow, actor, API key, end
	// user, provider and model: requests, errors, tokens, latency, cost,
	// unpriced requests) and deletes them, in one transaction, and
	// returns how many records it folded. It is idempotent: the folded
	// records are gone, so a second call with the same before folds
	// nothing. Summary and SummaryBy read the totals with the records;
	// List shows only records not yet folded. The retention scheduler
	// calls it with its cut-off (say, 30 days ago) before it deletes.
	Rollup(ctx context.Context, before time.Time) (rows int64, err error)
}

// UsageSpend is a workspace's running count for one month.
type UsageSpend struct {
	// Month is "2006-01" in UTC.
	Month string `json:"month"`
	// Tokens counts input and output tokens (cached input included).
	Tokens   int64         `json:"tokens"`
	Cost     pricing.Money `json:"cost"`
	Requests int64         `json:"requests"`
}

// MonthKey is the UTC month of t as UsageSpend.Month and the budget
// tables name it: "2026-12".
func MonthKey(t time.Time) string { return t.UTC().Format("2006-01") }
