package batch_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/batch"
	"github.com/google/go-cmp/cmp"
)

// sink is a store for the batcher to write to. Its first write blocks
// until release is closed (when gate is set), so that the next items queue
// up behind it.
type sink struct {
	gate    bool
	entered chan struct{} // closed when the first write begins
	release chan struct{}
	bad     int // an item the store refuses

	mu      sync.Mutex // guards the fields below
	calls   int
	batches [][]int
	stored  []int
}

func newSink(gate bool) *sink {
	return &sink{gate: gate, entered: make(chan struct{}), release: make(chan struct{}), bad: -1}
}

func (s *sink) write(ctx context.Context, items []int) error {
	if _, ok := ctx.Deadline(); !ok {
		return errors.New("write without a deadline")
	}
	s.mu.Lock()
	s.calls++
	first := s.calls == 1
	s.mu.Unlock()
	if first {
		close(s.entered)
		if s.gate {
			<-s.release
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, slices.Clone(items))
	if slices.Contains(items, s.bad) {
		return errors.New("refused")
	}
	s.stored = append(s.stored, items...)
	return nil
}

func (s *sink) storedSorted() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.stored)
	slices.Sort(out)
	return out
}

func count(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestBatcherWritesEverythingOnStop(t *testing.T) {
	s := newSink(false)
	b := batch.New(s.write, &batch.Options[int]{MaxBatch: 7})
	const goroutines, each = 8, 100
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				b.Add(g*each + i)
			}
		})
	}
	wg.Wait()
	b.Stop()
	b.Stop()                 // idempotent
	b.Add(goroutines * each) // after Stop, Add writes at once

	if diff := cmp.Diff(count(goroutines*each+1), s.storedSorted()); diff != "" {
		t.Errorf("stored items (-want +got):\n%s", diff)
	}
	if b.Dropped() != 0 {
		t.Errorf("Dropped() = %d, want 0", b.Dropped())
	}
	for _, bt := range s.batches {
		if len(bt) > 7 {
			t.Fatalf("a batch of %d items, want at most MaxBatch 7", len(bt))
		}
	}
}

func TestBatcherWhenFull(t *testing.T) {
	tests := []struct {
		name          string
		writeWhenFull bool
		wantDropped   int64
	}{
		// The writer holds item 0 while the buffer holds 1 and 2; the
		// other 7 find it full.
		{"drops by default", false, 7},
		{"writes in Add with WriteWhenFull", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSink(true)
			var mu sync.Mutex
			var dropped []int
			b := batch.New(s.write, &batch.Options[int]{
				Buffer: 2, WriteWhenFull: tt.writeWhenFull,
				OnDrop: func(item int, err error) {
					if !errors.Is(err, batch.ErrFull) {
						t.Errorf("OnDrop(%d, %v), want ErrFull", item, err)
					}
					mu.Lock()
					dropped = append(dropped, item)
					mu.Unlock()
				},
			})
			b.Add(0)
			<-s.entered // the writer is stuck on item 0
			start := time.Now()
			for i := 1; i < 10; i++ {
				b.Add(i)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("9 Adds against a stuck writer took %v; Add must not wait for it", d)
			}
			if tt.writeWhenFull {
				// Items 3-9 were written by Add before the writer moved.
				if diff := cmp.Diff([]int{3, 4, 5, 6, 7, 8, 9}, s.storedSorted()); diff != "" {
					t.Errorf("stored while the writer was stuck (-want +got):\n%s", diff)
				}
			}
			close(s.release)
			b.Stop()
			if got := b.Dropped(); got != tt.wantDropped || int64(len(dropped)) != got {
				t.Errorf("Dropped() = %d, OnDrop saw %v; want %d", got, dropped, tt.wantDropped)
			}
			if got, want := len(s.storedSorted()), 10-int(tt.wantDropped); got != want {
				t.Errorf("stored %d items, want %d", got, want)
			}
		})
	}
}

func TestBatcherRetriesAFailedBatchItemByItem(t *testing.T) {
	s := newSink(true)
	s.bad = 5
	var gotItem int
	var gotErr error
	b := batch.New(s.write, &batch.Options[int]{OnDrop: func(item int, err error) { gotItem, gotErr = item, err }})
	b.Add(0)
	<-s.entered
	for i := 1; i < 10; i++ {
		b.Add(i) // queue up behind item 0, to be written as one batch
	}
	close(s.release)
	b.Stop()

	if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 6, 7, 8, 9}, s.storedSorted()); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	if b.Dropped() != 1 || gotItem != 5 || gotErr == nil || gotErr.Error() != "refused" {
		t.Errorf("Dropped() = %d, OnDrop(%d, %v); want item 5 dropped with the store's error", b.Dropped(), gotItem, gotErr)
	}
	if !slices.ContainsFunc(s.batches, func(bt []int) bool { return len(bt) > 1 && slices.Contains(bt, 5) }) {
		t.Errorf("batches %v: item 5 was never part of a larger batch, so the retry went untested", s.batches)
	}
}

func TestBatcherLingerGathersItemsIntoOneWrite(t *testing.T) {
	s := newSink(false)
	b := batch.New(s.write, &batch.Options[int]{MaxBatch: 4, Linger: 200 * time.Millisecond})
	// Items arriving one by one within the linger window share a write;
	// a full batch is written without waiting for the rest of the window.
	for i := range 6 {
		b.Add(i)
		time.Sleep(5 * time.Millisecond)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(s.storedSorted()) < 6 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	batches := slices.Clone(s.batches)
	s.mu.Unlock()
	if diff := cmp.Diff([][]int{{0, 1, 2, 3}, {4, 5}}, batches); diff != "" {
		t.Errorf("batches without Stop (-want +got):\n%s", diff)
	}
	b.Stop()
}

func TestBatcherStopDoesNotWaitForLinger(t *testing.T) {
	s := newSink(false)
	b := batch.New(s.write, &batch.Options[int]{Linger: time.Hour})
	for i := range 3 {
		b.Add(i)
	}
	start := time.Now()
	b.Stop()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Stop took %v with an hour's linger, want it to write at once", d)
	}
	if diff := cmp.Diff(count(3), s.storedSorted()); diff != "" {
		t.Errorf("stored items (-want +got):\n%s", diff)
	}
}
