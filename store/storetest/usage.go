package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func testUsage(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("RecordListSummary", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		u := st.Usage()

		t0 := time.Date(2025, 6, 1, 9, 0, 0, 123456000, time.UTC)
		rec := func(ws store.Workspace, at time.Time, agent, provider, model string, in, out, cached, lat, up int, status store.Status, kind string) store.UsageRecord {
			return store.UsageRecord{ID: store.NewID(), WorkspaceID: ws.ID, APIKeyID: "key-" + agent, Agent: agent,
				Model: model, Provider: provider, User: "alice@example.com",
				InputTokens: in, OutputTokens: out, CachedTokens: cached, LatencyMs: lat, UpstreamMs: up,
				Status: status, ErrorKind: kind, CreatedAt: at,
				Surface: "openai", Actor: "apikey:key-" + agent, RunID: "run-" + agent}
		}
		old := rec(a, t0.Add(-time.Hour), "helper", "openai", "gpt-4o", 1000, 100, 0, 50, 40, store.StatusOK, "")
		r1 := rec(a, t0, "helper", "openai", "gpt-4o", 100, 50, 20, 1000, 800, store.StatusOK, "")
		r2 := rec(a, t0.Add(time.Minute), "helper", "openai", "gpt-4o", 200, 25, 0, 500, 400, store.StatusError, "provider")
		r3 := rec(a, t0.Add(2*time.Minute), "writer", "anthropic", "claude-sonnet", 10, 5, 3, 70, 60, store.StatusOK, "")
		r4 := rec(a, t0.Add(3*time.Minute), "helper", "anthropic", "claude-sonnet", 7, 1, 0, 9, 8, store.StatusOK, "")
		other := rec(b, t0, "helper", "openai", "gpt-4o", 9999, 9999, 0, 1, 1, store.StatusOK, "")
		// A time in another zone is the same instant.
		r3.CreatedAt = r3.CreatedAt.In(time.FixedZone("JST", 9*3600))
		for _, r := range []store.UsageRecord{r2, old, r1, r4, r3, other} {
			if err := u.Record(ctx, r); err != nil {
				t.Fatalf("Record(%s at %v) = %v", r.Agent, r.CreatedAt, err)
			}
		}
		r3.CreatedAt = r3.CreatedAt.UTC()

		list, err := u.List(ctx, a.ID, t0, 0)
		if err != nil {
			t.Fatalf("List(a, t0) = %v", err)
		}
		if diff := cmp.Diff([]store.UsageRecord{r4, r3, r2, r1}, list); diff != "" {
			t.Errorf("List(a, t0) mismatch, want records since t0 newest first (-want +got):\n%s", diff)
		}
		list, err = u.List(ctx, a.ID, t0, 2)
		if err != nil {
			t.Fatalf("List(a, t0, 2) = %v", err)
		}
		if diff := cmp.Diff([]store.UsageRecord{r4, r3}, list); diff != "" {
			t.Errorf("List(a, t0, limit 2) mismatch (-want +got):\n%s", diff)
		}
		list, err = u.List(ctx, b.ID, time.Time{}, 0)
		if err != nil {
			t.Fatalf("List(b) = %v", err)
		}
		if diff := cmp.Diff([]store.UsageRecord{other}, list); diff != "" {
			t.Errorf("List(b) mismatch, want only b's record (-want +got):\n%s", diff)
		}

		sum, err := u.Summary(ctx, a.ID, t0)
		if err != nil {
			t.Fatalf("Summary(a, t0) = %v", err)
		}
		want := []store.UsageSummary{
			{Agent: "helper", Provider: "anthropic", Model: "claude-sonnet", Requests: 1, InputTokens: 7, OutputTokens: 1, LatencyMs: 9, UpstreamMs: 8},
			{Agent: "helper", Provider: "openai", Model: "gpt-4o", Requests: 2, Errors: 1,
				InputTokens: 300, OutputTokens: 75, CachedTokens: 20, LatencyMs: 1500, UpstreamMs: 1200},
			{Agent: "writer", Provider: "anthropic", Model: "claude-sonnet", Requests: 1,
				InputTokens: 10, OutputTokens: 5, CachedTokens: 3, LatencyMs: 70, UpstreamMs: 60},
		}
		if diff := cmp.Diff(want, sum); diff != "" {
			t.Errorf("Summary(a, t0) mismatch (-want +got):\n%s", diff)
		}
		sum, err = u.Summary(ctx, a.ID, time.Time{})
		if err != nil {
			t.Fatalf("Summary(a, all time) = %v", err)
		}
		want[1].Requests, want[1].InputTokens, want[1].OutputTokens = 3, 1300, 175
		want[1].LatencyMs, want[1].UpstreamMs = 1550, 1240
		if diff := cmp.Diff(want, sum); diff != "" {
			t.Errorf("Summary(a, all time) mismatch (-want +got):\n%s", diff)
		}
		sum, err = u.Summary(ctx, a.ID, t0.Add(time.Hour))
		if err != nil || len(sum) != 0 {
			t.Errorf("Summary(a, future) = %+v, %v; want none", sum, err)
		}
	})

	t.Run("SummaryBy", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		u := st.Usage()
		rec := func(ws store.Workspace, at time.Time, agent, actor, provider, model string, in, out int, status store.Status) store.UsageRecord {
			return store.UsageRecord{WorkspaceID: ws.ID, Agent: agent, Actor: actor, Provider: provider, Model: model,
				InputTokens: in, OutputTokens: out, CachedTokens: in / 10, LatencyMs: 100, UpstreamMs: 80, Status: status, CreatedAt: at}
		}
		day1 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		jst := time.FixedZone("JST", 9*3600)
		records := []store.UsageRecord{
			// Before since: counted in no group.
			rec(a, day1.Add(-time.Microsecond), "helper", "user:ann", "openai", "gpt-4o", 5000, 5000, store.StatusOK),
			// The first instant of 1 May.
			rec(a, day1, "helper", "user:ann", "openai", "gpt-4o", 100, 10, store.StatusOK),
			// 08:59 on 2 May in Tokyo is still 1 May in UTC.
			rec(a, day1.Add(23*time.Hour+59*time.Minute).In(jst), "writer", "apikey:k1", "anthropic", "claude-sonnet", 200, 20, store.StatusError),
			// 2 May, and the last microsecond of 2 May.
			rec(a, day1.Add(24*time.Hour), "helper", "apikey:k1", "openai", "gpt-4o", 300, 30, store.StatusOK),
			rec(a, day1.Add(48*time.Hour-time.Microsecond), "", "", "openai", "gpt-4o-mini", 400, 40, store.StatusOK),
			// 4 May (nothing on 3 May).
			rec(a, day1.Add(72*time.Hour+time.Hour), "writer", "user:ann", "anthropic", "claude-sonnet", 500, 50, store.StatusOK),
			// Another workspace's.
			rec(b, day1.Add(time.Hour), "helper", "user:ann", "openai", "gpt-4o", 9000, 9000, store.StatusOK),
		}
		if err := u.Record(ctx, records...); err != nil {
			t.Fatalf("Record = %v", err)
		}
		total := func(key string, in, out int64, requests, errors int64) store.UsageTotal {
			return store.UsageTotal{Key: key, Requests: requests, Errors: errors, InputTokens: in, OutputTokens: out,
				CachedTokens: in / 10, LatencyMs: 100 * requests, UpstreamMs: 80 * requests}
		}
		for _, tc := range []struct {
			by   store.UsageGroup
			want []store.UsageTotal
		}{
			{store.UsageByDay, []store.UsageTotal{
				total("2026-05-01", 300, 30, 2, 1), total("2026-05-02", 700, 70, 2, 0), total("2026-05-04", 500, 50, 1, 0)}},
			{store.UsageByAgent, []store.UsageTotal{
				total("", 400, 40, 1, 0), total("helper", 400, 40, 2, 0), total("writer", 700, 70, 2, 1)}},
			{store.UsageByActor, []store.UsageTotal{
				total("", 400, 40, 1, 0), total("apikey:k1", 500, 50, 2, 1), total("user:ann", 600, 60, 2, 0)}},
			{store.UsageByModel, []store.UsageTotal{
				total("anthropic/claude-sonnet", 700, 70, 2, 1), total("openai/gpt-4o", 400, 40, 2, 0), total("openai/gpt-4o-mini", 400, 40, 1, 0)}},
		} {
			got, err := u.SummaryBy(ctx, a.ID, day1, tc.by)
			if err != nil {
				t.Errorf("SummaryBy(a, %s) = %v", tc.by, err)
				continue
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SummaryBy(a, since 1 May, %s) mismatch (-want +got):\n%s", tc.by, diff)
			}
		}
		// since bounds the days as it bounds the records: from 12:00 on
		// 2 May only the last record of that day counts.
		got, err := u.SummaryBy(ctx, a.ID, day1.Add(36*time.Hour), store.UsageByDay)
		if err != nil {
			t.Fatalf("SummaryBy(a, since 2 May noon, day) = %v", err)
		}
		if diff := cmp.Diff([]store.UsageTotal{total("2026-05-02", 400, 40, 1, 0), total("2026-05-04", 500, 50, 1, 0)}, got); diff != "" {
			t.Errorf("SummaryBy(a, since 2 May noon, day) mismatch (-want +got):\n%s", diff)
		}
		got, err = u.SummaryBy(ctx, b.ID, day1.Add(72*time.Hour), store.UsageByAgent)
		if err != nil || len(got) != 0 {
			t.Errorf("SummaryBy(b, since 4 May) = %+v, %v; want none", got, err)
		}
		for _, by := range []store.UsageGroup{"", "week", "Day"} {
			_, err := u.SummaryBy(ctx, a.ID, day1, by)
			wantErr(t, fmt.Sprintf("SummaryBy(by %q)", by), err, store.ErrInvalid)
		}
	})

	t.Run("RecordDefaults", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		before := time.Now()
		in := store.UsageRecord{WorkspaceID: a.ID, Model: "gpt-4o", Provider: "openai", Status: store.StatusOK}
		if err := st.Usage().Record(ctx, in); err != nil {
			t.Fatalf("Record = %v", err)
		}
		after := time.Now()
		list, err := st.Usage().List(ctx, a.ID, time.Time{}, 0)
		if err != nil || len(list) != 1 {
			t.Fatalf("List = %+v, %v; want one record", list, err)
		}
		got := list[0]
		if got.ID == "" {
			t.Error("Record left the ID empty")
		}
		checkStamp(t, "CreatedAt", got.CreatedAt, before, after)
		in.ID, in.CreatedAt = got.ID, got.CreatedAt
		if diff := cmp.Diff(in, got); diff != "" {
			t.Errorf("List mismatch (-recorded +got):\n%s", diff)
		}
	})

	t.Run("RecordBatch", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		u := st.Usage()
		ok := store.UsageRecord{WorkspaceID: a.ID, Model: "m", Provider: "p", Status: store.StatusOK, InputTokens: 2}
		if err := u.Record(ctx); err != nil {
			t.Fatalf("Record() of nothing = %v", err)
		}
		batch := []store.UsageRecord{ok, ok, ok}
		if err := u.Record(ctx, batch...); err != nil {
			t.Fatalf("Record(3 records) = %v", err)
		}
		list, err := u.List(ctx, a.ID, time.Time{}, 0)
		if err != nil || len(list) != 3 {
			t.Fatalf("List = %d records, %v; want 3", len(list), err)
		}
		if list[0].ID == list[1].ID || list[1].ID == list[2].ID {
			t.Error("records of one batch share an ID")
		}
		// All or nothing: a batch with an invalid record, or one naming an
		// unknown workspace, stores none of its records.
		bad := ok
		bad.Status = ""
		wantErr(t, "Record(batch with invalid)", u.Record(ctx, ok, bad), store.ErrInvalid)
		orphan := ok
		orphan.WorkspaceID = store.NewID()
		wantErr(t, "Record(batch with orphan)", u.Record(ctx, ok, orphan), store.ErrNotFound)
		if list, _ := u.List(ctx, a.ID, time.Time{}, 0); len(list) != 3 {
			t.Errorf("failed batches stored records: %d records, want 3", len(list))
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		u := st.Usage()
		ok := store.UsageRecord{WorkspaceID: a.ID, Model: "m", Provider: "p", Status: store.StatusOK}
		for name, mutate := range map[string]func(*store.UsageRecord){
			"no workspace":    func(r *store.UsageRecord) { r.WorkspaceID = "" },
			"no status":       func(r *store.UsageRecord) { r.Status = "" },
			"bad status":      func(r *store.UsageRecord) { r.Status = "failed" },
			"negative tokens": func(r *store.UsageRecord) { r.OutputTokens = -1 },
			"negative time":   func(r *store.UsageRecord) { r.UpstreamMs = -1 },
		} {
			bad := ok
			mutate(&bad)
			wantErr(t, "Record("+name+")", u.Record(ctx, bad), store.ErrInvalid)
		}
		orphan := ok
		orphan.WorkspaceID = store.NewID()
		wantErr(t, "Record(unknown workspace)", u.Record(ctx, orphan), store.ErrNotFound)
		dup := ok
		dup.ID = store.NewID()
		if err := u.Record(ctx, dup); err != nil {
			t.Fatalf("Record = %v", err)
		}
		wantErr(t, "Record(duplicate id)", u.Record(ctx, dup), store.ErrConflict)
	})

	t.Run("ConcurrentWriters", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		key, err := st.APIKeys().Create(ctx, store.APIKey{WorkspaceID: a.ID, Name: "k", Prefix: "ac_k", Hash: keyHash("k")})
		if err != nil {
			t.Fatalf("Create key = %v", err)
		}
		// 50 goroutines, as many concurrent requests would: each records
		// its usage, touches its key and reads, all at once.
		const writers, perWriter = 50, 10
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			mu    sync.Mutex
			errs  []error // guarded by mu
		)
		fail := func(err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		t0 := time.Now()
		for w := range writers {
			wg.Go(func() {
				<-start
				for i := range perWriter {
					r := store.UsageRecord{WorkspaceID: a.ID, APIKeyID: key.ID, Agent: fmt.Sprintf("agent-%d", w%5),
						Model: "gpt-4o", Provider: "openai", InputTokens: w + 1, OutputTokens: 1, LatencyMs: i, Status: store.StatusOK}
					if err := st.Usage().Record(ctx, r); err != nil {
						fail(fmt.Errorf("writer %d record %d: %w", w, i, err))
						return
					}
					if err := st.APIKeys().Touch(ctx, a.ID, key.ID, time.Now()); err != nil {
						fail(fmt.Errorf("writer %d touch %d: %w", w, i, err))
						return
					}
					if _, err := st.APIKeys().GetByHash(ctx, keyHash("k")); err != nil {
						fail(fmt.Errorf("writer %d get key %d: %w", w, i, err))
						return
					}
				}
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			t.Error(err)
		}
		if len(errs) > 0 {
			t.FailNow()
		}

		sum, err := st.Usage().Summary(ctx, a.ID, time.Time{})
		if err != nil {
			t.Fatalf("Summary = %v", err)
		}
		var requests, input int64
		for _, s := range sum {
			requests += s.Requests
			input += s.InputTokens
		}
		// Writer w records perWriter rows of w+1 input tokens.
		wantInput := int64(perWriter * writers * (writers + 1) / 2)
		if requests != writers*perWriter || input != wantInput || len(sum) != 5 {
			t.Errorf("after %d concurrent records: %d requests, %d input tokens in %d groups; want %d, %d in 5",
				writers*perWriter, requests, input, len(sum), writers*perWriter, wantInput)
		}
		list, err := st.Usage().List(ctx, a.ID, t0.Add(-time.Second), writers*perWriter+1)
		if err != nil || len(list) != writers*perWriter {
			t.Errorf("List = %d records, %v; want %d", len(list), err, writers*perWriter)
		}
		got, err := st.APIKeys().Get(ctx, a.ID, key.ID)
		if err != nil || got.LastUsedAt == nil || got.LastUsedAt.Before(t0.Truncate(time.Microsecond)) {
			t.Errorf("key after concurrent touches = %+v, %v; want LastUsedAt after the start", got, err)
		}
	})
}
