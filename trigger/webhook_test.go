package trigger_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/trigger"
	"github.com/agentcraftlab/agentcraft/trigger/triggertest"
)

// agents is a trigger.Agents knowing a fixed set of names.
type agents map[string]store.Agent

func (a agents) GetAgent(_ context.Context, _, name string) (store.Agent, error) {
	if ag, ok := a[name]; ok {
		return ag, nil
	}
	return store.Agent{}, store.ErrNotFound
}

func TestDeliver(t *testing.T) {
	st := openSQLite(t)
	ws, wf := mustWorkflow(t, st)
	r := newRig(t, st, "p1", agents{"helper": {Name: "helper"}})
	ctx := t.Context()
	tg, secret, err := r.svc.Create(ctx, ws, trigger.Spec{Name: ptr("github"), Kind: ptr("webhook"), Workflow: ptr(wf.Name)})
	if err != nil {
		t.Fatal(err)
	}
	if len(secret) < 40 || tg.WorkflowID != wf.ID || !tg.Enabled {
		t.Fatalf("Create = %+v, secret %q", tg, secret)
	}
	if string(tg.SecretCiphertext) == secret || len(tg.SecretCiphertext) == 0 {
		t.Fatal("the stored secret is not sealed")
	}
	now := time.Now()
	body := `{"action":"opened","number":7}`

	// Refused: wrong secret, tampered body, missing headers, stale, unknown.
	for name, c := range map[string]struct {
		id   string
		h    http.Header
		body string
		want error
	}{
		"wrong secret":  {tg.ID, triggertest.Headers("whsec_other", now, body, "d0"), body, trigger.ErrSignature},
		"tampered body": {tg.ID, triggertest.Headers(secret, now, body, "d0"), `{"action":"closed"}`, trigger.ErrSignature},
		"no headers":    {tg.ID, http.Header{}, body, trigger.ErrSignature},
		"stale":         {tg.ID, triggertest.Headers(secret, now.Add(-6*time.Minute), body, "d0"), body, trigger.ErrStale},
		"unknown":       {"nope", triggertest.Headers(secret, now, body, "d0"), body, trigger.ErrUnknown},
	} {
		if _, err := r.svc.Deliver(ctx, c.id, c.h, []byte(c.body), 0, now); !errors.Is(err, c.want) {
			t.Errorf("%s: Deliver = %v, want %v", name, err, c.want)
		}
	}
	if runs, _ := st.Runs().List(ctx, ws, store.RunFilter{}); len(runs) != 0 {
		t.Fatalf("refused deliveries started %d runs", len(runs))
	}

	d, err := r.svc.Deliver(ctx, tg.ID, triggertest.Headers(secret, now, body, "d1"), []byte(body), 0, now)
	if err != nil || d.Replay || d.Run.TriggerID != tg.ID || d.Run.WorkflowID != wf.ID {
		t.Fatalf("Deliver(good) = %+v, %v", d, err)
	}
	if string(d.Run.Input) != `{"input":{"action":"opened","number":7}}` {
		t.Errorf("run input = %s; want the body as {{input}}", d.Run.Input)
	}
	// The same delivery id again (a redelivery, re-signed later) gets the
	// first run back and starts none.
	again, err := r.svc.Deliver(ctx, tg.ID, triggertest.Headers(secret, now.Add(time.Minute), body, "d1"), []byte(body), 0, now.Add(time.Minute))
	if err != nil || !again.Replay || again.Run.ID != d.Run.ID {
		t.Errorf("redelivery = %+v, %v; want the first run, replay", again, err)
	}
	// Without a delivery id, replaying the captured request is caught by
	// its signature.
	h := triggertest.Headers(secret, now, `{"n":1}`, "")
	first, err := r.svc.Deliver(ctx, tg.ID, h, []byte(`{"n":1}`), 0, now)
	if err != nil || first.Replay {
		t.Fatalf("Deliver(no id) = %+v, %v", first, err)
	}
	if replay, err := r.svc.Deliver(ctx, tg.ID, h, []byte(`{"n":1}`), 0, now.Add(time.Second)); err != nil || !replay.Replay || replay.Run.ID != first.Run.ID {
		t.Errorf("replayed request = %+v, %v; want the first run", replay, err)
	}
	if _, err := r.svc.Deliver(ctx, tg.ID, triggertest.Headers(secret, now, "not json", "d9"), []byte("not json"), 0, now); err == nil {
		t.Error("a body that is not JSON was accepted")
	}
	runs, _ := st.Runs().List(ctx, ws, store.RunFilter{TriggerID: tg.ID})
	if len(runs) != 2 {
		t.Errorf("%d runs of the trigger; want 2 (one per distinct delivery)", len(runs))
	}

	// Rotating the secret retires the old one at once.
	_, newSecret, err := r.svc.RotateSecret(ctx, ws, tg.ID)
	if err != nil || newSecret == secret {
		t.Fatalf("RotateSecret = %q, %v", newSecret, err)
	}
	if _, err := r.svc.Deliver(ctx, tg.ID, triggertest.Headers(secret, now, body, "d2"), []byte(body), 0, now); !errors.Is(err, trigger.ErrSignature) {
		t.Errorf("old secret after rotation: %v, want ErrSignature", err)
	}
	if _, err := r.svc.Deliver(ctx, tg.ID, triggertest.Headers(newSecret, now, body, "d2"), []byte(body), 0, now); err != nil {
		t.Errorf("new secret after rotation: %v", err)
	}
	// Disabled looks like unknown.
	if _, err := r.svc.Update(ctx, ws, tg.ID, trigger.Spec{Enabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Deliver(ctx, tg.ID, triggertest.Headers(newSecret, now, body, "d3"), []byte(body), 0, now); !errors.Is(err, trigger.ErrUnknown) {
		t.Errorf("disabled trigger: %v, want ErrUnknown", err)
	}
}

// TestDeliverToAgent starts an agent as a one-node durable run.
func TestDeliverToAgent(t *testing.T) {
	st := openSQLite(t)
	ws, _ := mustWorkflow(t, st)
	r := newRig(t, st, "p1", agents{"helper": {Name: "helper"}})
	tg, secret, err := r.svc.Create(t.Context(), ws, trigger.Spec{Name: ptr("to-agent"), Kind: ptr("webhook"), Agent: ptr("helper")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.svc.Create(t.Context(), ws, trigger.Spec{Name: ptr("x"), Kind: ptr("webhook"), Agent: ptr("ghost")}); err == nil {
		t.Error("an unknown agent was accepted")
	}
	now := time.Now()
	d, err := r.svc.Deliver(t.Context(), tg.ID, triggertest.Headers(secret, now, `"summarise"`, "a1"), []byte(`"summarise"`), 0, now)
	if err != nil {
		t.Fatal(err)
	}
	if d.Run.WorkflowID != "" || d.Run.TriggerID != tg.ID {
		t.Errorf("run = %+v", d.Run)
	}
	if s := string(d.Run.Definition); !contains(s, `"type":"agent"`) || !contains(s, `"agent":"helper"`) {
		t.Errorf("definition %s is not a run of agent helper", s)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// FuzzDeliverHeaders sends arbitrary signature, timestamp and delivery
// headers: nothing panics, and no run starts unless the headers are a
// valid signature of the body.
func FuzzDeliverHeaders(f *testing.F) {
	st := openSQLite(f)
	ws, wf := mustWorkflow(f, st)
	r := newRig(f, st, "fuzz", nil)
	tg, secret, err := r.svc.Create(context.Background(), ws, trigger.Spec{Name: ptr("f"), Kind: ptr("webhook"), Workflow: ptr(wf.ID)})
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1800000000, 0)
	good := triggertest.Headers(secret, now, `{}`, "x")
	f.Add(good.Get(egress.TimestampHeader), good.Get(egress.SignatureHeader), "x", []byte(`{}`))
	f.Add("", "", "", []byte(nil))
	f.Add("1800000000", "sha256=00", "\x00", []byte(`[`))
	f.Add("1800000000", "t=1,v1=ab", "", []byte(`{"a":1}`))
	f.Fuzz(func(t *testing.T, ts, sig, delivery string, body []byte) {
		h := http.Header{}
		h.Set(egress.TimestampHeader, ts)
		h.Set(egress.SignatureHeader, sig)
		h.Set(trigger.DeliveryHeader, delivery)
		d, err := r.svc.Deliver(context.Background(), tg.ID, h, body, 0, now)
		verr := egress.VerifySplit([]byte(secret), ts, sig, body, 0, now)
		if err == nil && verr != nil {
			t.Fatalf("delivery accepted (run %s) with headers that do not verify: %v", d.Run.ID, verr)
		}
	})
}

// TestDeliveryClaimedByADeadProcess: a process claimed a delivery and
// died, before starting its run or after starting it but before recording
// it. Its sender's retries must not answer 409 forever: while the claim is
// young they do (the claimer may still be starting), then a retry starts
// the run itself, and a run the claimer did start is found, not doubled.
func TestDeliveryClaimedByADeadProcess(t *testing.T) {
	st := openSQLite(t)
	ws, wf := mustWorkflow(t, st)
	r := newRig(t, st, "p1", nil)
	ctx := t.Context()
	tg, secret, err := r.svc.Create(ctx, ws, trigger.Spec{Name: ptr("hook"), Kind: ptr("webhook"), Workflow: ptr(wf.Name)})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"n":1}`
	deliver := func(id string, at time.Time) (trigger.Delivery, error) {
		return r.svc.Deliver(ctx, tg.ID, triggertest.Headers(secret, at, body, id), []byte(body), 0, at)
	}
	runsOf := func() int {
		runs, err := st.Runs().List(ctx, ws, store.RunFilter{TriggerID: tg.ID})
		if err != nil {
			t.Fatal(err)
		}
		return len(runs)
	}

	// Died before starting the run: only the claim is left.
	claim, first, err := st.Triggers().Deliver(ctx, store.TriggerDelivery{WorkspaceID: ws, TriggerID: tg.ID, DeliveryID: "dead-1"})
	if err != nil || !first {
		t.Fatalf("claim = %v, %v", first, err)
	}
	if _, err := deliver("dead-1", time.Now()); !errors.Is(err, trigger.ErrPending) {
		t.Fatalf("retry of a young claim: %v, want ErrPending", err)
	}
	later := claim.CreatedAt.Add(trigger.PendingTakeover + time.Second)
	d, err := deliver("dead-1", later)
	if err != nil || d.Replay || d.Run.TriggerID != tg.ID {
		t.Fatalf("retry after the claimer died = %+v, %v; want a new run", d, err)
	}
	again, err := deliver("dead-1", later.Add(time.Second))
	if err != nil || !again.Replay || again.Run.ID != d.Run.ID {
		t.Errorf("next retry = %+v, %v; want the taken-over run, replayed", again, err)
	}
	if n := runsOf(); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}

	// Died after starting the run, before recording it: the run has the
	// id the claim derives, and a retry finds it at once.
	claim, _, err = st.Triggers().Deliver(ctx, store.TriggerDelivery{WorkspaceID: ws, TriggerID: tg.ID, DeliveryID: "dead-2"})
	if err != nil {
		t.Fatal(err)
	}
	started, err := st.Runs().Create(ctx, store.Run{ID: store.IDFor(claim.CreatedAt, "webhook:"+tg.ID+":dead-2"), WorkspaceID: ws,
		WorkflowID: wf.ID, WorkflowVersion: wf.Version, Definition: wf.Definition, Status: store.RunQueued, TriggerID: tg.ID})
	if err != nil {
		t.Fatal(err)
	}
	d, err = deliver("dead-2", time.Now())
	if err != nil || !d.Replay || d.Run.ID != started.ID {
		t.Fatalf("retry after the claimer started the run = %+v, %v; want that run", d, err)
	}
	if n := runsOf(); n != 2 {
		t.Errorf("%d runs, want 2 (one per delivery)", n)
	}
	rec, first, err := st.Triggers().Deliver(ctx, store.TriggerDelivery{WorkspaceID: ws, TriggerID: tg.ID, DeliveryID: "dead-2"})
	if err != nil || first || rec.RunID != started.ID {
		t.Errorf("delivery dead-2 = %+v (first %v), %v; want its run recorded", rec, first, err)
	}
}
