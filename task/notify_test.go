package task_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
)

// flakySender fails its first fails sends, then delivers; permanent makes
// the failures ErrPermanent.
type flakySender struct {
	mu        sync.Mutex
	fails     int
	permanent bool
	tries     int
	sent      []task.Message
}

func (f *flakySender) Send(_ context.Context, _ store.Notification, m task.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries++
	if f.tries <= f.fails {
		if f.permanent {
			return fmt.Errorf("%w: blocked by the user", task.ErrPermanent)
		}
		return errors.New("503 from the channel")
	}
	f.sent = append(f.sent, m)
	return nil
}

func TestDeliverRetriesWithBackoff(t *testing.T) {
	for _, permanent := range []bool{false, true} {
		t.Run(fmt.Sprint("permanent=", permanent), func(t *testing.T) {
			e := newEnv(t, envOptions{})
			snd := &flakySender{fails: 2, permanent: permanent}
			e.svc.SetSender("line", snd)
			out := e.submit(t, task.Intent{Action: "search", Target: "handbook"}, "")
			e.waitTask(t, out.Task.ID, store.TaskDone)
			ctx := t.Context()
			pass := func() int {
				n, err := e.svc.Deliver(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			if n := pass(); n != 0 || snd.tries != 1 {
				t.Fatalf("first pass sent %d after %d tries", n, snd.tries)
			}
			ns, _ := e.st.Notifications().List(ctx, e.ws, store.NotificationFilter{TaskID: out.Task.ID})
			if permanent {
				if len(ns) != 1 || ns[0].Status != store.NotificationFailed || pass() != 0 || snd.tries != 1 {
					t.Errorf("after a permanent failure: %+v, %d tries; want failed and not tried again", ns, snd.tries)
				}
				return
			}
			if pass(); snd.tries != 1 {
				t.Errorf("tried again at once (%d tries); want a backoff", snd.tries)
			}
			e.clock.advance(3 * time.Second)
			if pass(); snd.tries != 2 {
				t.Errorf("after 3 s: %d tries, want 2", snd.tries)
			}
			e.clock.advance(3 * time.Second) // the second wait is 4 s
			if pass(); snd.tries != 2 {
				t.Errorf("3 s into a 4 s wait: %d tries, want 2", snd.tries)
			}
			e.clock.advance(2 * time.Second)
			if n := pass(); n != 1 || snd.tries != 3 || len(snd.sent) != 1 {
				t.Errorf("after the backoff: sent %d, %d tries", n, snd.tries)
			}
			if n := pass(); n != 0 || snd.tries != 3 {
				t.Errorf("a sent notification was sent again (%d tries)", snd.tries)
			}
		})
	}
}
