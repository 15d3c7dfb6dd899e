package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// Defaults of the run ceilings and the storage quota (Options).
const (
	DefaultMaxStepsCeiling       = 10000
	DefaultTimeoutCeiling        = 24 * time.Hour
	DefaultStorageQuota    int64 = 1 << 30 // 1 GiB
)

// ErrStorageQuota is returned by Start and Rerun for a workspace whose
// runs already store their quota of data (Options.StorageQuota), and
// fails a run whose next checkpoint would cross it.
var ErrStorageQuota = errors.New("storage quota exceeded")

func orDefault[T int | int64 | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0 // none
	}
	return v
}

// Ceilings returns the bounds this service puts on definitions' settings.
func (s *Service) Ceilings() workflow.Ceilings {
	return workflow.Ceilings{MaxSteps: s.opts.MaxStepsCeiling, Timeout: s.opts.TimeoutCeiling}
}

// checkQuota refuses a new run in a workspace at or over its quota.
func (s *Service) checkQuota(ctx context.Context, workspaceID string) error {
	if s.opts.StorageQuota <= 0 {
		return nil
	}
	used, err := s.storedBytes(ctx, workspaceID)
	if err != nil {
		return fmt.Errorf("check storage quota: %w", err)
	}
	if used >= s.opts.StorageQuota {
		return quotaError("store", used, s.opts.StorageQuota)
	}
	return nil
}

func quotaError(verb string, used, quota int64) error {
	return fmt.Errorf("%w: the workspace's runs %s %d bytes of checkpoints and events, and its quota is %d bytes (workflows.storage_quota_mib): remove old runs or ask the operator to raise the quota",
		ErrStorageQuota, verb, used, quota)
}

// limitStorage makes rec refuse checkpoints past the workspace's quota,
// counting from what the workspace stores now. Runs of one workspace
// executing at once each count from the same start, so together they may
// pass the quota by what they write meanwhile; the next Start refuses.
func (s *Service) limitStorage(ctx context.Context, rec *recorder) error {
	if s.opts.StorageQuota <= 0 {
		return nil
	}
	used, err := s.storedBytes(ctx, rec.workspaceID)
	if err != nil {
		return fmt.Errorf("read stored run bytes: %w", err)
	}
	rec.quota = s.opts.StorageQuota
	rec.used.Store(used)
	rec.wrote = func(n int64) { s.addStored(rec.workspaceID, n) }
	return nil
}

// storedUsage is a workspace's run data as last measured, plus what this
// process's runs saved since.
type storedUsage struct {
	bytes int64
	at    time.Time
}

// storedBytes returns the workspace's run data, measured at most
// Options.StorageRecheck ago.
func (s *Service) storedBytes(ctx context.Context, workspaceID string) (int64, error) {
	s.usageMu.Lock()
	u, ok := s.usage[workspaceID]
	s.usageMu.Unlock()
	if ok && time.Since(u.at) < s.opts.StorageRecheck {
		return u.bytes, nil
	}
	n, err := s.st.Runs().StoredBytes(ctx, workspaceID)
	if err != nil {
		return 0, err
	}
	s.usageMu.Lock()
	s.usage[workspaceID] = storedUsage{bytes: n, at: time.Now()}
	s.usageMu.Unlock()
	return n, nil
}

// addStored counts n bytes a run of the workspace saved.
func (s *Service) addStored(workspaceID string, n int64) {
	s.usageMu.Lock()
	if u, ok := s.usage[workspaceID]; ok {
		u.bytes += n
		s.usage[workspaceID] = u
	}
	s.usageMu.Unlock()
}
