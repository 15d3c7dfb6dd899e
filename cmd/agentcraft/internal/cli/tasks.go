package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentcraftlab/agentcraft/catalog"
	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/memory"
	"github.com/agentcraftlab/agentcraft/platform"
	agentrun "github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/server/lineapi"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/caldav"
)

// taskTools finds the tools of a task's steps as an agent of the
// workspace would get them: the workspace's disabled tools left out,
// kb_search over every persistent knowledge base of the workspace.
type taskTools struct {
	p  *platform.Platform
	kb *kb.Service
}

func (t taskTools) Tool(ctx context.Context, workspaceID, name string) (tool.Tool, error) {
	var bases []string
	if name == catalog.KBSearchTool && t.kb != nil {
		kbs, err := t.kb.List(ctx, workspaceID)
		if err != nil {
			return nil, fmt.Errorf("knowledge bases: %w", err)
		}
		for _, b := range kbs {
			if b.ExpiresAt.IsZero() {
				bases = append(bases, b.Name)
			}
		}
	}
	off, err := t.p.Catalog().Disabled(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	ts, warnings, err := t.p.Catalog().Resolve(workspaceID, []string{name}, bases, off)
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("%w: %s is not available: %s", tool.ErrUnknownTool, name, strings.Join(warnings, "; "))
	}
	return ts[0], nil
}

// taskPolicy is the configured policy of the task control plane.
func taskPolicy(cfg config.Config) task.Policy {
	return task.Policy{ApprovalTTL: cfg.Tasks.ApprovalTTL, AllowSelfApproval: cfg.Tasks.AllowSelfApproval,
		CompensateOnFailure: cfg.Tasks.CompensateOnFailure, TrustedExecutors: cfg.Tasks.TrustedExecutors}
}

// workspacePolicies are the task policies of the workspaces that set
// their own (workspaces[].tasks), over the server's.
func workspacePolicies(cfg config.Config) map[string]task.Policy {
	out := map[string]task.Policy{}
	for _, w := range cfg.Workspaces {
		wt := w.Tasks
		if wt == nil {
			continue
		}
		p := taskPolicy(cfg)
		if wt.ApprovalTTL > 0 {
			p.ApprovalTTL = wt.ApprovalTTL
		}
		if wt.AllowSelfApproval != nil {
			p.AllowSelfApproval = *wt.AllowSelfApproval
		}
		if wt.CompensateOnFailure != nil {
			p.CompensateOnFailure = *wt.CompensateOnFailure
		}
		if wt.TrustedExecutors != nil {
			p.TrustedExecutors = wt.TrustedExecutors
		}
		out[w.Name] = p
	}
	return out
}

// registerCalendar adds the CalDAV calendar's tools (calendar_create_event,
// calendar_list_events) to the built-in tools when tasks.calendar is set.
func registerCalendar(cfg config.Config, p *platform.Platform) error {
	c := cfg.Tasks.Calendar
	if c == nil {
		return nil
	}
	cal, err := caldav.New(caldav.Config{URL: c.URL, Username: c.Username, Password: c.Password, Token: c.Token})
	if err != nil {
		return fmt.Errorf("tasks.calendar: %w", err)
	}
	for _, t := range cal.Tools() {
		if err := p.Tools().Register(t); err != nil {
			return fmt.Errorf("tasks.calendar: %w", err)
		}
	}
	return nil
}

// newTasks builds the task service over the run service.
func newTasks(cfg config.Config, stk *stack, runs *controlplane.Service, logger *slog.Logger) (*task.Service, error) {
	opts := &task.Options{Policy: taskPolicy(cfg), WorkspacePolicies: workspacePolicies(cfg), Model: cfg.Tasks.Model, Audit: stk.p.RecordAudit, Logger: logger}
	if cfg.Tasks.Model != "" {
		opts.Extractor = task.NewModelExtractor(stk.runner, cfg.Tasks.Model)
		opts.Judge = task.NewModelJudge(stk.runner, cfg.Tasks.Model)
	}
	return task.New(stk.st, runs, stk.ledger, opts)
}

// lineProvider is the issuer LINE accounts are linked under
// (store.UserIdentities), as LINE Login names itself.
const lineProvider = "https://access.line.me"

// lineAccounts resolves LINE users to the linked AgentCraft users and
// their roles.
type lineAccounts struct{ st store.Store }

func (a lineAccounts) LookupLINE(ctx context.Context, workspaceID, lineUserID string) (string, identity.Role, bool, error) {
	id, err := a.st.UserIdentities().Lookup(ctx, lineProvider, lineUserID)
	if errors.Is(err, store.ErrNotFound) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	m, err := a.st.Members().Get(ctx, workspaceID, id.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return "", "", false, nil // linked, but not a member of this workspace
	}
	if err != nil {
		return "", "", false, err
	}
	return id.UserID, m.Role, true, nil
}

// lineMount builds the LINE channel of channels.line, registers its
// sender with the task service and returns the webhook's public route.
func lineMount(ctx context.Context, cfg config.Config, stk *stack, tasks *task.Service, logger *slog.Logger) ([]httpapi.Mount, error) {
	l := cfg.Channels.LINE
	if l == nil {
		return nil, nil
	}
	name := l.Workspace
	if name == "" {
		name = cfg.Server.Workspace
	}
	ws, err := stk.st.Workspaces().GetOrCreate(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("channels.line.workspace: %w", err)
	}
	ch, err := lineapi.New(lineapi.Options{ChannelSecret: l.ChannelSecret, ChannelAccessToken: l.ChannelAccessToken,
		APIBaseURL: l.APIBaseURL, WorkspaceID: ws.ID, Tasks: tasks, Accounts: lineAccounts{stk.st}, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("channels.line: %w", err)
	}
	tasks.SetSender("line", ch.Sender())
	logger.Info("line_channel_ready", "workspace", ws.Name, "webhook", "POST /api/line/webhook")
	return []httpapi.Mount{{Pattern: "POST /api/line/webhook", Handler: ch.Webhook()}}, nil
}

// conversationSender delivers the answers of a tool call held in a
// conversation (task.ChannelConversation) into that conversation, as
// the assistant's messages, so the thread goes on from the result.
type conversationSender struct{ convs *memory.Conversations }

func (c conversationSender) Send(ctx context.Context, n store.Notification, m task.Message) error {
	if m.Text == "" {
		return fmt.Errorf("%w: notification %s has no text", task.ErrPermanent, n.ID)
	}
	err := c.convs.Finish(ctx, agentrun.Principal{WorkspaceID: n.WorkspaceID}, n.Target, []llm.Message{llm.Text(llm.RoleAssistant, m.Text)})
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: conversation %s is gone: %v", task.ErrPermanent, n.Target, err)
	}
	return err
}
