package a2a

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

func scoped(scope string) context.Context {
	return context.WithValue(context.Background(), callKey{}, &call{scope: scope})
}

// TestA2ATaskStore: a task is seen only in its scope, updates check the
// version they replace, and a finished task is forgotten after the TTL.
func TestA2ATaskStore(t *testing.T) {
	s := newTaskStore(time.Hour)
	ws1, ws2 := scoped("ws1\x00helper"), scoped("ws2\x00helper")
	task := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	v, err := s.Create(ws1, task)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ws1, task); !errors.Is(err, taskstore.ErrTaskAlreadyExists) {
		t.Errorf("second Create = %v, want ErrTaskAlreadyExists", err)
	}
	if _, err := s.Get(ws2, "t1"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("Get from another scope = %v, want ErrTaskNotFound", err)
	}
	got, err := s.Get(ws1, "t1")
	if err != nil || got.Task.Status.State != a2a.TaskStateWorking || got.Version != v {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	got.Task.Status.State = a2a.TaskStateCanceled // a copy: the store keeps its own
	if again, _ := s.Get(ws1, "t1"); again.Task.Status.State != a2a.TaskStateWorking {
		t.Errorf("changing a returned task changed the stored one: %s", again.Task.Status.State)
	}

	done := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	if _, err := s.Update(ws1, &taskstore.UpdateRequest{Task: done, PrevVersion: v + 5}); !errors.Is(err, taskstore.ErrConcurrentModification) {
		t.Errorf("Update from a stale version = %v, want ErrConcurrentModification", err)
	}
	if _, err := s.Update(ws1, &taskstore.UpdateRequest{Task: done, PrevVersion: v}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ws1, "t1"); err != nil || got.Task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("Get after Update = %+v, %v", got, err)
	}

	s.ttl = time.Nanosecond
	time.Sleep(time.Millisecond)
	if _, err := s.Get(ws1, "t1"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("Get after the TTL = %v, want ErrTaskNotFound", err)
	}
	if _, err := s.Create(ws1, &a2a.Task{ID: "t2", ContextID: "c2", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.tasks["t1"]; ok {
		t.Error("Create kept a task finished longer than the TTL ago")
	}
	if _, ok := s.tasks["t2"]; !ok {
		t.Error("Create pruned the running task")
	}
}
