package imagegen_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentcraftlab/agentcraft/tool/imagegen"
)

// memUploads is imagegen.Uploads in memory.
type memUploads struct {
	mu    sync.Mutex // guards files and next
	files map[string]upload
	next  int
	err   error // Save fails with it when set
}

type upload struct {
	Workspace, Name, MIME string
	Data                  []byte
}

var _ imagegen.Uploads = (*memUploads)(nil)

func (m *memUploads) Save(_ context.Context, ws, name, mime string, data []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return "", m.err
	}
	if m.files == nil {
		m.files = map[string]upload{}
	}
	m.next++
	id := fmt.Sprintf("up%d", m.next)
	m.files[id] = upload{ws, name, mime, data}
	return id, nil
}

func (m *memUploads) Delete(_ context.Context, ws, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.files[id]; ok && f.Workspace == ws {
		delete(m.files, id)
	}
	return nil
}

func (m *memUploads) get(id string) (upload, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[id]
	return f, ok
}

func (m *memUploads) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.files)
}

func ptr[T any](v T) *T { return &v }
