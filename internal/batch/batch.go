// Package batch writes items off the request path, many per write.
//
// A Batcher hands items to a buffered channel and one goroutine writes
// whatever has queued up in one call, so a busy server pays one commit per
// batch rather than per item. The audit log and the usage records use it:
//
//	b := batch.New(func(ctx context.Context, recs []store.UsageRecord) error {
//		return usage.Record(ctx, recs...)
//	}, &batch.Options[store.UsageRecord]{WriteWhenFull: true})
//	defer b.Stop()
//	b.Add(rec)
package batch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrFull is the reason OnDrop gets for an item dropped because the buffer
// was full.
var ErrFull = errors.New("batch: buffer full; the store is too slow or down")

// Options configure a Batcher. The zero value (or nil) is the default.
type Options[T any] struct {
	// Buffer is how many items may wait to be written. Default 1024.
	Buffer int
	// MaxBatch bounds one write. Default 256.
	MaxBatch int
	// WriteTimeout bounds one write. Default 10 s.
	WriteTimeout time.Duration
	// Linger is how long the writer waits after the first item of a batch
	// for more to arrive (until MaxBatch are queued) before it writes.
	// Default 0: write at once whatever has queued up. A few hundred
	// milliseconds turn the one-commit-per-request of a server at a steady,
	// light load into one commit per interval, which keeps the store's CPU
	// time off the requests; Stop still writes everything at once.
	Linger time.Duration
	// WriteWhenFull makes Add write the item itself, in its caller's
	// goroutine, when the buffer is full: nothing is lost and a slow store
	// slows the callers down. Default false: Add drops the item, counts it
	// (Dropped) and reports it to OnDrop with ErrFull, so a slow store
	// cannot stall the callers.
	WriteWhenFull bool
	// OnDrop is called with each item that is not written and why:
	// ErrFull, or the error of writing the item on its own. It runs in
	// Add's goroutine or the writer's, so it must not block. Default:
	// nothing.
	OnDrop func(item T, err error)
}

// Batcher writes items in batches from one goroutine. Its methods are safe
// for concurrent use. Create it with New and end it with Stop.
type Batcher[T any] struct {
	write func(ctx context.Context, items []T) error
	o     Options[T]
	ch    chan T
	wg    sync.WaitGroup
	drops atomic.Int64

	mu     sync.RWMutex // guards closed against a send on the closed ch
	closed bool
}

// New starts a batcher that passes batches to write. write is called from
// one goroutine at a time, except after Stop and with WriteWhenFull, when
// Add calls it too. When write fails on a batch, each item of the batch is
// written again on its own, so that one bad item does not lose the others;
// write must therefore not store an item twice when it fails (write the
// batch in one transaction, or give the items ids). The slice passed to
// write is reused once write returns.
func New[T any](write func(ctx context.Context, items []T) error, opts *Options[T]) *Batcher[T] {
	var o Options[T]
	if opts != nil {
		o = *opts
	}
	if o.Buffer <= 0 {
		o.Buffer = 1024
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	b := &Batcher[T]{write: write, o: o, ch: make(chan T, o.Buffer)}
	b.wg.Add(1)
	go b.loop()
	return b
}

// Add queues item; when the buffer is full it writes or drops it (see
// Options.WriteWhenFull). After Stop, Add writes synchronously.
func (b *Batcher[T]) Add(item T) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		b.flush([]T{item})
		return
	}
	select {
	case b.ch <- item:
	default:
		if b.o.WriteWhenFull {
			b.flush([]T{item})
			return
		}
		b.drop(item, ErrFull)
	}
}

// Dropped is how many items were not written: the buffer was full, or the
// store refused them.
func (b *Batcher[T]) Dropped() int64 { return b.drops.Load() }

// Stop writes what is queued and waits for the writer. Idempotent.
func (b *Batcher[T]) Stop() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.ch)
	}
	b.mu.Unlock()
	b.wg.Wait()
}

func (b *Batcher[T]) loop() {
	defer b.wg.Done()
	batch := make([]T, 0, b.o.MaxBatch)
	var linger *time.Timer
	if b.o.Linger > 0 {
		linger = time.NewTimer(b.o.Linger)
		linger.Stop()
	}
	for item := range b.ch {
		batch = append(batch[:0], item)
		open := b.gather(&batch, linger)
		b.flush(batch)
		if !open {
			return
		}
	}
}

// gather appends queued items to batch until it holds MaxBatch: those
// already waiting, or with linger, those arriving until the timer fires.
// It reports false once the channel is closed (and drained).
func (b *Batcher[T]) gather(batch *[]T, linger *time.Timer) bool {
	var fired <-chan time.Time
	if linger != nil {
		linger.Reset(b.o.Linger)
		defer linger.Stop()
		fired = linger.C
	}
	for len(*batch) < b.o.MaxBatch {
		if fired == nil {
			select {
			case more, ok := <-b.ch:
				if !ok {
					return false
				}
				*batch = append(*batch, more)
				continue
			default:
				return true
			}
		}
		select {
		case more, ok := <-b.ch:
			if !ok {
				return false
			}
			*batch = append(*batch, more)
		case <-fired:
			return true
		}
	}
	return true
}

// flush writes items, retrying a failed batch item by item.
func (b *Batcher[T]) flush(items []T) {
	ctx, cancel := context.WithTimeout(context.Background(), b.o.WriteTimeout)
	err := b.write(ctx, items)
	cancel()
	if err == nil {
		return
	}
	if len(items) > 1 {
		for i := range items {
			b.flush(items[i : i+1])
		}
		return
	}
	b.drop(items[0], err)
}

func (b *Batcher[T]) drop(item T, err error) {
	b.drops.Add(1)
	if b.o.OnDrop != nil {
		b.o.OnDrop(item, err)
	}
}
