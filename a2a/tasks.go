package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// taskStore is the SDK task store (taskstore.Store) the Server uses. It is
// written here rather than taken from taskstore.InMemory because that one
// neither forgets finished tasks (memory would grow without bound) nor
// checks who reads a task (any caller knowing an id could read another
// workspace's task): this one keeps a task for ttl after it ends and shows
// it only to the scope (workspace and agent) that created it.
type taskStore struct {
	ttl time.Duration

	mu    sync.Mutex // guards tasks
	tasks map[a2a.TaskID]*storedTask
}

type storedTask struct {
	task    []byte // JSON: every Get hands out its own copy
	version taskstore.TaskVersion
	scope   string
	ended   time.Time // zero while the task runs
}

func newTaskStore(ttl time.Duration) *taskStore {
	return &taskStore{ttl: ttl, tasks: map[a2a.TaskID]*storedTask{}}
}

var _ taskstore.Store = (*taskStore)(nil)

func scopeOf(ctx context.Context) string {
	if c := callFrom(ctx); c != nil {
		return c.scope
	}
	return ""
}

func (s *taskStore) expired(t *storedTask, now time.Time) bool {
	return !t.ended.IsZero() && now.Sub(t.ended) > s.ttl
}

// Create implements taskstore.Store.
func (s *taskStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	data, err := json.Marshal(task)
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("a2a: encode task: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for id, t := range s.tasks { // prune here rather than in a goroutine nobody stops
		if s.expired(t, now) {
			delete(s.tasks, id)
		}
	}
	if _, ok := s.tasks[task.ID]; ok {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	t := &storedTask{task: data, version: 1, scope: scopeOf(ctx)}
	if task.Status.State.Terminal() {
		t.ended = now
	}
	s.tasks[task.ID] = t
	return t.version, nil
}

// Update implements taskstore.Store.
func (s *taskStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	data, err := json.Marshal(req.Task)
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("a2a: encode task: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tasks[req.Task.ID]
	if t == nil {
		return taskstore.TaskVersionMissing, a2a.ErrTaskNotFound
	}
	if req.PrevVersion != taskstore.TaskVersionMissing && req.PrevVersion != t.version {
		return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
	}
	t.task, t.version = data, t.version+1
	if req.Task.Status.State.Terminal() && t.ended.IsZero() {
		t.ended = time.Now()
	}
	return t.version, nil
}

// Get implements taskstore.Store: a task of another scope, or one that
// ended more than ttl ago, is not found.
func (s *taskStore) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	s.mu.Lock()
	t := s.tasks[id]
	var (
		data    []byte
		version taskstore.TaskVersion
	)
	found := t != nil && t.scope == scopeOf(ctx) && !s.expired(t, time.Now())
	if found {
		data, version = t.task, t.version
	}
	s.mu.Unlock()
	if !found {
		return nil, a2a.NewError(a2a.ErrTaskNotFound, fmt.Sprintf("task %q not found: it never existed, belongs to another agent, or ended more than %s ago", id, s.ttl))
	}
	var task a2a.Task
	if err := json.Unmarshal(data, &task); err != nil {
		return nil, fmt.Errorf("a2a: decode stored task: %w", err)
	}
	return &taskstore.StoredTask{Task: &task, Version: version}, nil
}

// List implements taskstore.Store. ListTasks is not offered: callers read
// the tasks they started by id.
func (s *taskStore) List(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return nil, a2a.NewError(a2a.ErrUnsupportedOperation, "ListTasks is not served; read a task with GetTask and its id")
}
