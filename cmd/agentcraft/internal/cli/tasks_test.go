package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/memory"
	agentrun "github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
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

// TestConversationSender: a held call's answers are appended to the
// conversation it was made in; a conversation that is gone fails the
// notification for good.
func TestConversationSender(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ws, err := st.Workspaces().GetOrCreate(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	convs := memory.NewConversations(st, nil)
	owner := agentrun.Principal{WorkspaceID: ws.ID, Actor: agentrun.ActorUser, ActorID: "u1", UserID: "u1"}
	cv, err := convs.Create(ctx, owner, memory.NewConversation{Title: "launch"})
	if err != nil {
		t.Fatal(err)
	}
	snd := conversationSender{convs}
	n := store.Notification{ID: "n1", WorkspaceID: ws.ID, Channel: task.ChannelConversation, Target: cv.ID, Kind: task.KindResult}
	if err := snd.Send(ctx, n, task.Message{Text: "Approved and done: publish\nResult: ok"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := convs.Messages(ctx, owner, cv.ID, 0, 10)
	if err != nil || len(msgs) != 1 || string(msgs[0].Role) != string(llm.RoleAssistant) || !strings.Contains(msgs[0].Content, "Approved and done") {
		t.Fatalf("messages %+v, %v; want the result as the assistant's", msgs, err)
	}
	n.Target = "no-such-conversation"
	if err := snd.Send(ctx, n, task.Message{Text: "x"}); !errors.Is(err, task.ErrPermanent) {
		t.Errorf("send to a missing conversation = %v, want ErrPermanent", err)
	}
}
