package controlplane

import (
	"sync"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// broker fans a run's live events out to subscribers (SSE streams, the
// OpenAI surface) in the process that executes the run. It keeps each
// active run's events in memory until the run ends, so a subscriber that
// arrives late, or reconnects, gets what it missed before the live tail.
type broker struct {
	mu   sync.Mutex
	runs map[string]*runFeed
}

type runFeed struct {
	events []workflow.Event
	subs   map[chan workflow.Event]struct{}
	closed bool
}

// maxBacklog bounds the events a feed keeps; older ones are still in the
// store.
const maxBacklog = 10000

func newBroker() *broker { return &broker{runs: map[string]*runFeed{}} }

func (b *broker) feed(runID string) *runFeed {
	f := b.runs[runID]
	if f == nil {
		f = &runFeed{subs: map[chan workflow.Event]struct{}{}}
		b.runs[runID] = f
	}
	return f
}

// open starts (or restarts) a run's feed.
func (b *broker) open(runID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.feed(runID)
	f.closed = false
}

// publish sends ev to the run's subscribers; a subscriber that does not
// keep up is dropped (its channel closed) rather than stalling the run.
func (b *broker) publish(runID string, ev workflow.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.feed(runID)
	if len(f.events) >= maxBacklog {
		f.events = f.events[len(f.events)-maxBacklog/2:]
	}
	f.events = append(f.events, ev)
	for ch := range f.subs {
		select {
		case ch <- ev:
		default:
			delete(f.subs, ch)
			close(ch)
		}
	}
}

// close ends the run's feed: subscribers' channels close after the last
// event, and the backlog is dropped (the store has every event).
func (b *broker) close(runID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.runs[runID]
	if f == nil {
		return
	}
	for ch := range f.subs {
		delete(f.subs, ch) // so a late unsubscribe does not close it again
		close(ch)
	}
	f.closed = true
	delete(b.runs, runID)
}

// subscribe returns the backlog with Seq > after and a channel of the
// events that follow; ok is false when the run has no live feed here.
func (b *broker) subscribe(runID string, after int64) (backlog []workflow.Event, ch chan workflow.Event, cancel func(), ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.runs[runID]
	if f == nil || f.closed {
		return nil, nil, nil, false
	}
	for _, ev := range f.events {
		if ev.Seq > after {
			backlog = append(backlog, ev)
		}
	}
	ch = make(chan workflow.Event, 1024)
	f.subs[ch] = struct{}{}
	cancel = func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, live := f.subs[ch]; live {
			delete(f.subs, ch)
			close(ch)
		}
	}
	return backlog, ch, cancel, true
}
