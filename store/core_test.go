package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// recorder is a store.Driver that records the verbs Core calls. It embeds a
// nil Driver, so a verb the test did not expect panics.
type recorder struct {
	store.Driver
	calls []string
	run   store.Run
}

func (*recorder) Name() string { return "fake" }

func (r *recorder) RunGet(_ context.Context, _, _ string) (store.Run, error) {
	r.calls = append(r.calls, "RunGet")
	return r.run, nil
}

func (r *recorder) RunTransition(_ context.Context, p *store.RunTransitionParams) (store.Run, error) {
	r.calls = append(r.calls, "RunTransition")
	if p.To.Final() && p.Finished == nil || !p.To.Final() && p.Finished != nil {
		return store.Run{}, errors.New("finished_at does not follow the final status")
	}
	if p.Release != (p.To != store.RunRunning) {
		return store.Run{}, errors.New("lease release does not follow the status")
	}
	return store.Run{}, store.ErrNotFound // the run is not in a from status
}

func (r *recorder) RunEventInsert(_ context.Context, p *store.RunEventInsertParams) error {
	r.calls = append(r.calls, "RunEventInsert")
	return nil
}

// TestCoreRunStateMachine holds the run state machine to one place: Core
// refuses bad arguments before a driver runs any SQL, and explains a
// conditional update that matched nothing with the stored run.
func TestCoreRunStateMachine(t *testing.T) {
	ctx := context.Background()
	d := &recorder{run: store.Run{ID: "r1", Status: store.RunSucceeded}}
	runs := store.NewCore(d).Runs()

	if _, err := runs.Transition(ctx, "ws", "r1", nil, store.RunFailed, store.RunUpdate{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Transition with no from status = %v, want ErrInvalid", err)
	}
	if _, err := runs.Transition(ctx, "ws", "r1", []store.RunStatus{"lost"}, store.RunFailed, store.RunUpdate{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Transition from an unknown status = %v, want ErrInvalid", err)
	}
	if _, err := runs.Transition(ctx, "ws", "r1", []store.RunStatus{store.RunRunning}, store.RunFailed,
		store.RunUpdate{Output: json.RawMessage(`{`)}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Transition with output that is not JSON = %v, want ErrInvalid", err)
	}
	if _, err := runs.Claim(ctx, "ws", "r1", "", time.Minute, false); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Claim without an owner = %v, want ErrInvalid", err)
	}
	if _, err := runs.Claim(ctx, "ws", "r1", "w1", 0, false); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Claim with ttl 0 = %v, want ErrInvalid", err)
	}
	err := runs.AppendEvents(ctx, "ws", []store.RunEvent{{RunID: "r1", Seq: 0, Type: "x"}})
	if !errors.Is(err, store.ErrInvalid) {
		t.Errorf("AppendEvents with seq 0 = %v, want ErrInvalid", err)
	}
	if len(d.calls) != 0 {
		t.Fatalf("Core called the driver (%v) for arguments it must refuse itself", d.calls)
	}

	got, err := runs.Transition(ctx, "ws", "r1", []store.RunStatus{store.RunRunning}, store.RunFailed, store.RunUpdate{})
	if !errors.Is(err, store.ErrConflict) || got.Status != store.RunSucceeded {
		t.Errorf("Transition of a finished run = %+v, %v; want the stored run and ErrConflict", got, err)
	}
	if !strings.HasPrefix(err.Error(), "fake: transition run r1:") {
		t.Errorf("error %q does not name the driver and the operation", err)
	}
	if want := []string{"RunTransition", "RunGet"}; strings.Join(d.calls, ",") != strings.Join(want, ",") {
		t.Errorf("driver calls = %v, want %v", d.calls, want)
	}
}
