package task_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// settleWatch is a store whose Tasks().Transition notes, the moment a
// task becomes final, what the task's notifications are: the first
// moment anyone can see it settled.
type settleWatch struct {
	store.Store
	mu   sync.Mutex
	seen map[string][]store.Notification // by task id
}

func (w *settleWatch) Tasks() store.Tasks { return watchedTasks{w.Store.Tasks(), w} }

type watchedTasks struct {
	store.Tasks
	w *settleWatch
}

func (t watchedTasks) Transition(ctx context.Context, workspaceID, id string, from []store.TaskStatus, to store.TaskStatus, u store.TaskUpdate) (store.Task, error) {
	got, err := t.Tasks.Transition(ctx, workspaceID, id, from, to, u)
	if err == nil && got.Status.Final() {
		ns, lerr := t.w.Store.Notifications().List(ctx, workspaceID, store.NotificationFilter{TaskID: id})
		if lerr != nil {
			panic(lerr)
		}
		t.w.mu.Lock()
		t.w.seen[id] = ns
		t.w.mu.Unlock()
	}
	return got, err
}

// TestAnswerQueuedWithTheSettledTask: a task's answer is queued in the
// transaction that settles it, so whoever sees the task done (a poller,
// Deliver's next pass) finds the answer queued, and a crash cannot come
// between the two and lose it. It was queued after the transition once,
// and TestDeliverRetriesWithBackoff's first pass found nothing to send
// now and then.
func TestAnswerQueuedWithTheSettledTask(t *testing.T) {
	base := newEnv(t, envOptions{})
	w := &settleWatch{Store: base.st, seen: map[string][]store.Notification{}}
	e := newEnv(t, envOptions{store: w, workspace: base.ws})

	done := e.submit(t, task.Intent{Action: "search", Target: "handbook"}, "")
	e.waitTask(t, done.Task.ID, store.TaskDone)

	rejected := e.submit(t, task.Intent{Action: "schedule", Object: "calendar_event", Target: "offsite", When: time.Now().Add(time.Hour).Format(time.RFC3339)}, "")
	e.waitTask(t, rejected.Task.ID, store.TaskAwaitingApproval)
	ap := e.pending(t, rejected.Task.ID)
	if _, err := e.svc.Decide(t.Context(), task.Decision{WorkspaceID: e.ws, ApprovalID: ap.ID, Approve: false, Approver: admin}); err != nil {
		t.Fatal(err)
	}
	e.waitTask(t, rejected.Task.ID, store.TaskCancelled)

	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range []struct {
		name, id string
		kinds    []string
	}{
		{"done", done.Task.ID, []string{task.KindResult}},
		{"rejected", rejected.Task.ID, []string{task.KindDecisionNoted, task.KindApproval}},
	} {
		ns, ok := w.seen[c.id]
		if !ok {
			t.Errorf("%s: no final transition seen", c.name)
			continue
		}
		var kinds []string
		for _, n := range ns {
			kinds = append(kinds, n.Kind)
		}
		if !slices.Equal(kinds, c.kinds) {
			t.Errorf("%s: when the task became final its notifications were %v, want %v (newest first)", c.name, kinds, c.kinds)
		}
	}
}
