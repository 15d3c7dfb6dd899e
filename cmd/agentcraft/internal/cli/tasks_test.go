package cli

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/task"
)

// TestWorkspacePolicies: a workspace's tasks keys replace the server's,
// the keys it leaves unset keep them.
func TestWorkspacePolicies(t *testing.T) {
	yes := true
	cfg := config.Config{
		Tasks: config.Tasks{ApprovalTTL: 2 * time.Hour, CompensateOnFailure: true, TrustedExecutors: []string{"research"}},
		Workspaces: []config.Workspace{
			{Name: "ops", Tasks: &config.WorkspaceTasks{AllowSelfApproval: &yes, TrustedExecutors: []string{"scheduler"}}},
			{Name: "plain"},
		},
	}
	want := map[string]task.Policy{"ops": {ApprovalTTL: 2 * time.Hour, AllowSelfApproval: true, CompensateOnFailure: true, TrustedExecutors: []string{"scheduler"}}}
	if diff := cmp.Diff(want, workspacePolicies(cfg)); diff != "" {
		t.Errorf("policies (-want +got):\n%s", diff)
	}
}
