package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/pricing"
	"github.com/agentcraftlab/agentcraft/store"
)

// testCosts covers the cost of usage rows, the new usage groups, the
// months' running counts, the rollup into daily totals and budgets.
func testCosts(t *testing.T, open func(t *testing.T) store.Store) {
	day1 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	// records are spread over three days and two workspaces, with costs,
	// unpriced models, workflows, end users and keys.
	records := func(a, b store.Workspace) []store.UsageRecord {
		rec := func(ws store.Workspace, at time.Time, agent, workflow, user, key, provider, model string, in, cached, out int, cost pricing.Money, status store.Status) store.UsageRecord {
			actor := "user:u1"
			if key != "" {
				actor = "apikey:" + key
			}
			return store.UsageRecord{WorkspaceID: ws.ID, Agent: agent, Workflow: workflow, User: user, APIKeyID: key, Actor: actor,
				Provider: provider, Model: model, InputTokens: in, CachedTokens: cached, OutputTokens: out,
				LatencyMs: 10, UpstreamMs: 8, Cost: cost, Unpriced: cost == 0, Status: status, CreatedAt: at}
		}
		return []store.UsageRecord{
			rec(a, day1.Add(time.Hour), "helper", "", "ann", "k1", "openai", "gpt-4o", 1000, 800, 100, 3_800_000, store.StatusOK),
			rec(a, day1.Add(2*time.Hour), "helper", "triage", "", "", "openai", "gpt-4o", 500, 0, 50, 1_750_000, store.StatusOK),
			rec(a, day1.Add(3*time.Hour), "writer", "triage", "bob", "k2", "ollama", "llama3", 70, 0, 7, 0, store.StatusError),
			rec(a, day1.Add(25*time.Hour), "helper", "", "ann", "k1", "openai", "gpt-4o", 10, 0, 1, 35_000, store.StatusOK),
			rec(a, day1.Add(25*time.Hour+time.Minute), "helper", "", "ann", "k1", "openai", "gpt-4o", 20, 0, 2, 70_000, store.StatusOK),
			rec(a, day1.Add(49*time.Hour), "writer", "report", "ann", "k2", "anthropic", "claude-sonnet-4", 300, 100, 30, 1_080_000, store.StatusOK),
			rec(b, day1.Add(time.Hour), "helper", "", "zed", "k9", "openai", "gpt-4o", 9999, 0, 9999, 999_999_999, store.StatusOK),
		}
	}

	t.Run("CostAndGroups", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		u := st.Usage()
		recs := records(a, b)
		if err := u.Record(ctx, recs...); err != nil {
			t.Fatalf("Record = %v", err)
		}
		list, err := u.List(ctx, a.ID, day1.Add(49*time.Hour), 0)
		if err != nil || len(list) != 1 {
			t.Fatalf("List = %+v, %v; want the last record", list, err)
		}
		want := recs[5]
		want.ID = list[0].ID
		if diff := cmp.Diff(want, list[0]); diff != "" {
			t.Errorf("stored record mismatch: cost, unpriced and workflow must round-trip (-want +got):\n%s", diff)
		}
		total := func(key string, requests, errs, in, out, cached int64, cost pricing.Money, unpriced int64) store.UsageTotal {
			return store.UsageTotal{Key: key, Requests: requests, Errors: errs, InputTokens: in, OutputTokens: out, CachedTokens: cached,
				LatencyMs: 10 * requests, UpstreamMs: 8 * requests, Cost: cost, Unpriced: unpriced}
		}
		for _, tc := range []struct {
			by   store.UsageGroup
			want []store.UsageTotal
		}{
			{store.UsageByDay, []store.UsageTotal{
				total("2026-05-01", 3, 1, 1570, 157, 800, 5_550_000, 1),
				total("2026-05-02", 2, 0, 30, 3, 0, 105_000, 0),
				total("2026-05-03", 1, 0, 300, 30, 100, 1_080_000, 0)}},
			{store.UsageByWorkflow, []store.UsageTotal{
				total("", 3, 0, 1030, 103, 800, 3_905_000, 0),
				total("report", 1, 0, 300, 30, 100, 1_080_000, 0),
				total("triage", 2, 1, 570, 57, 0, 1_750_000, 1)}},
			{store.UsageByUser, []store.UsageTotal{
				total("", 1, 0, 500, 50, 0, 1_750_000, 0),
				total("ann", 4, 0, 1330, 133, 900, 4_985_000, 0),
				total("bob", 1, 1, 70, 7, 0, 0, 1)}},
			{store.UsageByAPIKey, []store.UsageTotal{
				total("", 1, 0, 500, 50, 0, 1_750_000, 0),
				total("k1", 3, 0, 1030, 103, 800, 3_905_000, 0),
				total("k2", 2, 1, 370, 37, 100, 1_080_000, 1)}},
			{store.UsageByModel, []store.UsageTotal{
				total("anthropic/claude-sonnet-4", 1, 0, 300, 30, 100, 1_080_000, 0),
				total("ollama/llama3", 1, 1, 70, 7, 0, 0, 1),
				total("openai/gpt-4o", 4, 0, 1530, 153, 800, 5_655_000, 0)}},
		} {
			got, err := u.SummaryBy(ctx, a.ID, day1, tc.by)
			if err != nil {
				t.Errorf("SummaryBy(%s) = %v", tc.by, err)
				continue
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SummaryBy(a, %s) mismatch (-want +got):\n%s", tc.by, diff)
			}
		}
		sum, err := u.Summary(ctx, a.ID, day1)
		if err != nil {
			t.Fatalf("Summary = %v", err)
		}
		var cost pricing.Money
		for _, s := range sum {
			cost += s.Cost
		}
		if cost != 6_735_000 {
			t.Errorf("Summary cost total = %v; want 0.006735", cost)
		}
		bad := recs[0]
		bad.Cost = -1
		wantErr(t, "Record(negative cost)", u.Record(ctx, bad), store.ErrInvalid)
	})

	t.Run("Spend", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		u := st.Usage()
		may := time.Date(2026, 5, 31, 23, 59, 0, 0, time.UTC)
		june := may.Add(2 * time.Minute)
		r := func(ws store.Workspace, at time.Time, in, out int, cost pricing.Money) store.UsageRecord {
			return store.UsageRecord{WorkspaceID: ws.ID, Provider: "openai", Model: "gpt-4o", InputTokens: in, OutputTokens: out,
				Cost: cost, Status: store.StatusOK, CreatedAt: at}
		}
		if err := u.Record(ctx, r(a, may, 100, 10, 1000), r(a, june, 200, 20, 2000), r(a, june, 300, 30, 3000), r(b, june, 5, 5, 5)); err != nil {
			t.Fatalf("Record = %v", err)
		}
		if err := u.Record(ctx, r(a, june.Add(time.Hour), 1, 1, 1)); err != nil {
			t.Fatalf("Record = %v", err)
		}
		for _, tc := range []struct {
			ws    store.Workspace
			month time.Time
			want  store.UsageSpend
		}{
			{a, may, store.UsageSpend{Month: "2026-05", Tokens: 110, Cost: 1000, Requests: 1}},
			{a, june.Add(10 * 24 * time.Hour), store.UsageSpend{Month: "2026-06", Tokens: 552, Cost: 5001, Requests: 3}},
			{b, june, store.UsageSpend{Month: "2026-06", Tokens: 10, Cost: 5, Requests: 1}},
			{b, may, store.UsageSpend{Month: "2026-05"}},
		} {
			got, err := u.Spend(ctx, tc.ws.ID, tc.month)
			if err != nil || got != tc.want {
				t.Errorf("Spend(%s, %s) = %+v, %v; want %+v", tc.ws.Name, store.MonthKey(tc.month), got, err, tc.want)
			}
		}
		// A reset counts afresh; other months and workspaces keep theirs.
		reset := june.Add(2 * time.Hour)
		bud, err := st.Budgets().Reset(ctx, a.ID, reset)
		if err != nil || !bud.ResetAt.Equal(reset) || bud.Custom {
			t.Fatalf("Reset = %+v, %v; want ResetAt %v and the default limits", bud, err, reset)
		}
		// A record of a request made before the reset that reaches the
		// store after it (the usage writer is asynchronous) is not counted.
		if err := u.Record(ctx, r(a, reset.Add(time.Minute), 7, 3, 70), r(a, reset.Add(-time.Second), 1000, 1000, 1000)); err != nil {
			t.Fatalf("Record = %v", err)
		}
		if got, _ := u.Spend(ctx, a.ID, june); got != (store.UsageSpend{Month: "2026-06", Tokens: 10, Cost: 70, Requests: 1}) {
			t.Errorf("Spend(a, June) after reset = %+v; want only the record after it", got)
		}
		if got, _ := u.Spend(ctx, a.ID, may); got.Tokens != 110 {
			t.Errorf("Spend(a, May) after a June reset = %+v; want May untouched", got)
		}
		if got, _ := u.Spend(ctx, b.ID, june); got.Tokens != 10 {
			t.Errorf("Spend(b, June) after a's reset = %+v; want b untouched", got)
		}
	})

	t.Run("Rollup", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		u := st.Usage()
		if err := u.Record(ctx, records(a, b)...); err != nil {
			t.Fatalf("Record = %v", err)
		}
		type snapshot struct {
			Summary []store.UsageSummary
			By      map[store.UsageGroup][]store.UsageTotal
		}
		snap := func(ws store.Workspace, since time.Time) snapshot {
			t.Helper()
			s := snapshot{By: map[store.UsageGroup][]store.UsageTotal{}}
			var err error
			if s.Summary, err = u.Summary(ctx, ws.ID, since); err != nil {
				t.Fatalf("Summary = %v", err)
			}
			for _, g := range store.UsageGroups {
				if s.By[g], err = u.SummaryBy(ctx, ws.ID, since, g); err != nil {
					t.Fatalf("SummaryBy(%s) = %v", g, err)
				}
			}
			return s
		}
		sinces := []time.Time{{}, day1, day1.Add(24 * time.Hour), day1.Add(48 * time.Hour)}
		var before []snapshot
		for _, ws := range []store.Workspace{a, b} {
			for _, since := range sinces {
				before = append(before, snap(ws, since))
			}
		}
		spendBefore, _ := u.Spend(ctx, a.ID, day1)
		check := func(when string) {
			t.Helper()
			i := 0
			for _, ws := range []store.Workspace{a, b} {
				for _, since := range sinces {
					if diff := cmp.Diff(before[i], snap(ws, since)); diff != "" {
						t.Errorf("%s: totals of %s since %v changed (-before +after):\n%s", when, ws.Name, since, diff)
					}
					i++
				}
			}
			if got, _ := u.Spend(ctx, a.ID, day1); got != spendBefore {
				t.Errorf("%s: Spend = %+v; want %+v (a rollup does not change the month's count)", when, got, spendBefore)
			}
		}

		// Fold everything before 2 May 12:00: a's three records of 1 May
		// and two of 2 May (01:00, 01:01), and b's one.
		cut := day1.Add(36 * time.Hour)
		n, err := u.Rollup(ctx, cut)
		if err != nil || n != 6 {
			t.Fatalf("Rollup(2 May noon) = %d, %v; want 6 records folded", n, err)
		}
		check("after the first rollup")
		list, err := u.List(ctx, a.ID, time.Time{}, 0)
		if err != nil || len(list) != 1 || !list[0].CreatedAt.Equal(day1.Add(49*time.Hour)) {
			t.Errorf("List after rollup = %+v, %v; want only the 3 May record left", list, err)
		}
		// Idempotent: nothing is left to fold.
		if n, err := u.Rollup(ctx, cut); err != nil || n != 0 {
			t.Errorf("Rollup again = %d, %v; want 0", n, err)
		}
		check("after the second rollup")

		// A late record of a day already rolled up merges into its total.
		late := records(a, b)[0]
		late.CreatedAt = day1.Add(5 * time.Hour)
		if err := u.Record(ctx, late); err != nil {
			t.Fatalf("Record(late) = %v", err)
		}
		before = before[:0]
		for _, ws := range []store.Workspace{a, b} {
			for _, since := range sinces {
				before = append(before, snap(ws, since))
			}
		}
		spendBefore, _ = u.Spend(ctx, a.ID, day1)
		if n, err := u.Rollup(ctx, day1.Add(72*time.Hour)); err != nil || n != 2 {
			t.Fatalf("Rollup(all) = %d, %v; want 2", n, err)
		}
		check("after folding a late record into a rolled-up day")
		if got := snap(a, day1).By[store.UsageByDay]; len(got) != 3 || got[0].Requests != 4 {
			t.Errorf("days after the late fold = %+v; want 1 May with 4 requests", got)
		}
		_, err = u.Rollup(ctx, time.Time{})
		wantErr(t, "Rollup(zero)", err, store.ErrInvalid)
	})

	t.Run("Budgets", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		bs := st.Budgets()
		_, err := bs.Get(ctx, a.ID)
		wantErr(t, "Get(no budget)", err, store.ErrNotFound)

		put, err := bs.Put(ctx, store.Budget{WorkspaceID: a.ID, Custom: true, Tokens: 1000, Cost: 5 * pricing.Unit})
		if err != nil || !put.Custom || put.Tokens != 1000 || put.Cost != 5*pricing.Unit || !put.ResetAt.IsZero() || put.UpdatedAt.IsZero() {
			t.Fatalf("Put = %+v, %v", put, err)
		}
		got, err := bs.Get(ctx, a.ID)
		if err != nil || got != put {
			t.Errorf("Get = %+v, %v; want %+v", got, err, put)
		}
		_, err = bs.Put(ctx, store.Budget{WorkspaceID: a.ID, Tokens: -1})
		wantErr(t, "Put(negative tokens)", err, store.ErrInvalid)
		_, err = bs.Put(ctx, store.Budget{WorkspaceID: a.ID, Cost: -1})
		wantErr(t, "Put(negative cost)", err, store.ErrInvalid)
		_, err = bs.Put(ctx, store.Budget{WorkspaceID: store.NewID(), Tokens: 1})
		wantErr(t, "Put(unknown workspace)", err, store.ErrNotFound)

		// The warning is marked once per month and kind, even when many
		// ask at once.
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			wins  int   // guarded by mu
			errs  error // guarded by mu
			start = make(chan struct{})
		)
		for range 20 {
			wg.Go(func() {
				<-start
				ok, err := bs.MarkWarned(ctx, a.ID, store.BudgetTokens, "2026-05")
				mu.Lock()
				defer mu.Unlock()
				errs = errors.Join(errs, err)
				if ok {
					wins++
				}
			})
		}
		close(start)
		wg.Wait()
		if errs != nil || wins != 1 {
			t.Fatalf("20 concurrent MarkWarned = %d true, errors %v; want exactly 1", wins, errs)
		}
		if ok, err := bs.MarkWarned(ctx, a.ID, store.BudgetCost, "2026-05"); err != nil || !ok {
			t.Errorf("MarkWarned(cost) = %v, %v; want true (kinds are apart)", ok, err)
		}
		if ok, _ := bs.MarkWarned(ctx, a.ID, store.BudgetTokens, "2026-06"); !ok {
			t.Error("MarkWarned(next month) = false; want true")
		}
		if ok, _ := bs.MarkWarned(ctx, a.ID, store.BudgetTokens, "2026-06"); ok {
			t.Error("MarkWarned(same month again) = true; want false")
		}
		_, err = bs.MarkWarned(ctx, a.ID, "dollars", "2026-06")
		wantErr(t, "MarkWarned(unknown kind)", err, store.ErrInvalid)
		// A workspace without a budget row gets one, with the defaults.
		if ok, err := bs.MarkWarned(ctx, b.ID, store.BudgetCost, "2026-06"); err != nil || !ok {
			t.Errorf("MarkWarned(b) = %v, %v", ok, err)
		}
		if got, err := bs.Get(ctx, b.ID); err != nil || got.Custom {
			t.Errorf("Get(b) after a warning = %+v, %v; want a row with the default limits", got, err)
		}

		// A reset keeps the limits and clears the warnings.
		at := time.Date(2026, 6, 10, 8, 0, 0, 0, time.UTC)
		res, err := bs.Reset(ctx, a.ID, at)
		if err != nil || !res.ResetAt.Equal(at) || res.Tokens != 1000 || !res.Custom {
			t.Fatalf("Reset = %+v, %v", res, err)
		}
		if ok, _ := bs.MarkWarned(ctx, a.ID, store.BudgetTokens, "2026-06"); !ok {
			t.Error("MarkWarned after a reset = false; want the warning sent afresh")
		}
		// Put keeps the reset time.
		put, err = bs.Put(ctx, store.Budget{WorkspaceID: a.ID, Custom: true, Tokens: 2000})
		if err != nil || !put.ResetAt.Equal(at) || put.Cost != 0 {
			t.Errorf("Put after Reset = %+v, %v; want ResetAt kept, cost limit removed", put, err)
		}
		_, err = bs.Reset(ctx, store.NewID(), at)
		wantErr(t, "Reset(unknown workspace)", err, store.ErrNotFound)
	})
}
