package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// ErrLostRun means another executor saved a node this one ran: the run
// belongs to it now, and this executor must stop.
var ErrLostRun = errors.New("controlplane: another executor owns the run")

// recorder is a run's durable side: it numbers the run's events, hands
// them to live subscribers, and writes them to the store together with
// each checkpoint (one transaction per node), so a node's events and its
// saved output appear together or not at all.
//
// The run_finished event is held back, from the store and from live
// subscribers, until Flush: Service.end writes the run's row first, so
// whoever sees a run end (a /v1 answer saying it waits, an SSE stream's
// last event) reads the row's outcome when it asks.
type recorder struct {
	runs        store.Runs
	workspaceID string
	runID       string
	live        func(workflow.Event) // the broker; may be nil

	mu  sync.Mutex
	seq int64
	// publishing is held from numbering an event until it is published,
	// so live subscribers get events in Seq order even when branches emit
	// at once (a subscriber skips an event numbered below one it has
	// seen: events published out of order would be lost to it).
	publishing sync.Mutex
	pending    []store.RunEvent
	// finished is the run_finished event, held back until Flush.
	finished *heldEvent
	// lost is set when a save found its key taken by another executor.
	lost atomic.Bool
	// quota, when positive, caps used: the workspace's stored run bytes,
	// counted from the execution's start plus what Save wrote since.
	quota int64
	used  atomic.Int64
	wrote func(n int64) // told the size of each save; may be nil
	// saved is called after each checkpoint is stored; may be nil.
	saved func()
}

// NewCheckpointer returns the checkpointer of one run over the store,
// without events (benchmarks and tools use it; runs executed by the
// Service also persist their events).
func NewCheckpointer(runs store.Runs, workspaceID, runID string) workflow.Checkpointer {
	return &recorder{runs: runs, workspaceID: workspaceID, runID: runID}
}

// newRecorder continues the run's event numbering after the events
// already stored.
func newRecorder(ctx context.Context, runs store.Runs, workspaceID, runID string, live func(workflow.Event)) (*recorder, error) {
	r := &recorder{runs: runs, workspaceID: workspaceID, runID: runID, live: live}
	for {
		evs, err := runs.Events(ctx, workspaceID, runID, r.seq, 1000)
		if err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		if len(evs) == 0 {
			return r, nil
		}
		r.seq = evs[len(evs)-1].Seq
	}
}

// heldEvent is an event numbered and encoded but not yet written or
// published.
type heldEvent struct {
	ev     workflow.Event
	stored store.RunEvent
}

// Emit numbers ev, publishes it and queues it for the next write; a
// run_finished waits for Flush.
func (r *recorder) Emit(ev workflow.Event) {
	r.mu.Lock()
	r.seq++
	ev.Seq = r.seq
	data, err := json.Marshal(ev)
	if err != nil {
		data, _ = json.Marshal(map[string]any{"type": ev.Type, "error": "event not encodable: " + err.Error()})
	}
	se := store.RunEvent{RunID: r.runID, Seq: ev.Seq, Type: string(ev.Type), Data: data, CreatedAt: ev.Time}
	if ev.Type == workflow.EventRunFinished {
		r.finished = &heldEvent{ev: ev, stored: se}
		r.mu.Unlock()
		return
	}
	r.pending = append(r.pending, se)
	r.publishing.Lock()
	r.mu.Unlock()
	defer r.publishing.Unlock()
	if r.live != nil {
		r.live(ev)
	}
}

func (r *recorder) take() []store.RunEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.pending
	r.pending = nil
	return evs
}

// Flush writes the queued events, then writes and publishes a held
// run_finished.
func (r *recorder) Flush(ctx context.Context) error {
	err := r.FlushPending(ctx)
	r.mu.Lock()
	held := r.finished
	r.finished = nil
	r.mu.Unlock()
	if held == nil {
		return err
	}
	err = errors.Join(err, r.write(ctx, []store.RunEvent{held.stored}))
	if r.live != nil {
		r.publishing.Lock()
		defer r.publishing.Unlock()
		r.live(held.ev)
	}
	return err
}

// FlushPending writes the queued events but not a held run_finished.
func (r *recorder) FlushPending(ctx context.Context) error {
	return r.write(ctx, r.take())
}

func (r *recorder) write(ctx context.Context, evs []store.RunEvent) error {
	if len(evs) == 0 {
		return nil
	}
	if r.wrote != nil {
		var size int64
		for _, ev := range evs {
			size += int64(len(ev.Data))
		}
		r.wrote(size)
	}
	return r.runs.AppendEvents(ctx, r.workspaceID, evs)
}

// Load implements workflow.Checkpointer.
func (r *recorder) Load(ctx context.Context) (map[string]workflow.Saved, error) {
	cps, err := r.runs.Checkpoints(ctx, r.workspaceID, r.runID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]workflow.Saved, len(cps))
	for _, cp := range cps {
		var v any
		if len(cp.Output) > 0 {
			if err := json.Unmarshal(cp.Output, &v); err != nil {
				return nil, fmt.Errorf("checkpoint %s: %w", cp.Key, err)
			}
		}
		out[cp.Key] = workflow.Saved{Output: v, Handle: cp.Handle}
	}
	return out, nil
}

// Save implements workflow.Checkpointer: the node's output and the events
// queued so far, in one transaction.
func (r *recorder) Save(ctx context.Context, key, nodeID string, s workflow.Saved) error {
	out, err := json.Marshal(s.Output)
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	evs := r.take()
	if r.quota > 0 {
		size := int64(len(out))
		for _, ev := range evs {
			size += int64(len(ev.Data))
		}
		if used := r.used.Load(); used+size > r.quota {
			r.mu.Lock()
			r.pending = append(evs, r.pending...)
			r.mu.Unlock()
			return quotaError("would store", used+size, r.quota)
		}
		r.used.Add(size)
		if r.wrote != nil {
			r.wrote(size)
		}
	}
	err = r.runs.Checkpoint(ctx, r.workspaceID, store.Checkpoint{RunID: r.runID, Key: key, NodeID: nodeID, Output: out, Handle: s.Handle, CreatedAt: time.Now()}, evs)
	if errors.Is(err, store.ErrConflict) {
		r.lost.Store(true)
		return fmt.Errorf("%w: node execution %q was already saved", ErrLostRun, key)
	}
	if err != nil {
		// Keep the events for the next write.
		r.mu.Lock()
		r.pending = append(evs, r.pending...)
		r.mu.Unlock()
		return err
	}
	if r.saved != nil {
		r.saved()
	}
	return nil
}
