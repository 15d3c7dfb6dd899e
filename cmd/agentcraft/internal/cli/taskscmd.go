package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
)

// tasksEnv is what a tasks subcommand works with.
type tasksEnv struct {
	svc *task.Service
	ws  store.Workspace
}

// withTasks opens the configured database, finds the workspace (default
// server.workspace) and builds a task service without runs: it reads
// tasks and records decisions, which a running server's reconciler then
// applies (see task.New). Its decisions are audited at once, as the
// CLI's other commands do (a command has no recorder running; a failed
// write is a warning, the decision having been made).
func (e *env) withTasks(ctx context.Context, workspace string, fn func(t tasksEnv) error) error {
	cfg, err := e.load()
	if err != nil {
		return err
	}
	workspace = cmp.Or(workspace, cfg.Server.Workspace, "default")
	u, err := parseDatabase(cfg.Database.URL)
	if err != nil {
		return err
	}
	o, err := openDatabase(ctx, u, newLogger(e.stderr, cfg.Log))
	if err != nil {
		return err
	}
	defer o.close()
	st := o.st
	ws, err := findWorkspace(ctx, st, cfg, workspace, false)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("workspace %q does not exist in database %s; check --workspace, or pass the server's --config", workspace, u)
	case err != nil:
		return fmt.Errorf("workspace %q in database %s: %w", workspace, u, err)
	}
	svc, err := newCLITasks(cfg, st, e.stderr)
	if err != nil {
		return err
	}
	return fn(tasksEnv{svc: svc, ws: ws})
}

// newCLITasks is the task service of a command: no runs, no ledger, the
// configured policy (self-approval), audit rows written at once.
func newCLITasks(cfg config.Config, st store.Store, stderr io.Writer) (*task.Service, error) {
	return task.New(st, nil, nil, &task.Options{Policy: taskPolicy(cfg), WorkspacePolicies: workspacePolicies(cfg), Audit: func(ctx context.Context, ev store.AuditEvent) {
		if err := st.AuditLog().Append(ctx, ev); err != nil {
			fmt.Fprintf(stderr, "warning: the audit log did not record %s of %s: %v\n", ev.Action, ev.Target, err)
		}
	}})
}

func tasksCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "Tasks and their approvals: list, show, approve, reject",
		Long: "Tasks are requests made on a channel (LINE, the web, the API) that agents carry out.\n" +
			"These commands work directly on the database of the configuration. A decision made\n" +
			"here is recorded at once; a running server resumes or cancels the task's run within\n" +
			"seconds (or when it next starts).",
	}
	var workspace string
	cmd.PersistentFlags().StringVar(&workspace, "workspace", "", "workspace (default: server.workspace of the configuration, \"default\")")
	cmd.AddCommand(tasksListCmd(e, &workspace), tasksShowCmd(e, &workspace),
		tasksDecideCmd(e, &workspace, true), tasksDecideCmd(e, &workspace, false))
	return cmd
}

func tasksListCmd(e *env, workspace *string) *cobra.Command {
	var status, source, cursor string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the workspace's tasks, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := store.TaskFilter{Status: store.TaskStatus(status), Source: source, Limit: limit, Cursor: cursor}
			if f.Status != "" && !f.Status.Valid() {
				return fmt.Errorf("--status %q is not a task status; use open, planning, awaiting_approval, running, done, failed, cancelled or expired", status)
			}
			if limit < 1 || limit > store.MaxListLimit {
				return fmt.Errorf("--limit %d is out of range; use 1 to %d", limit, store.MaxListLimit)
			}
			return e.withTasks(cmd.Context(), *workspace, func(t tasksEnv) error {
				page, err := t.svc.List(cmd.Context(), t.ws.ID, f)
				if errors.Is(err, store.ErrInvalid) {
					return fmt.Errorf("--cursor is malformed; pass the \"next\" of the previous page (tasks list --json) unchanged")
				}
				if err != nil {
					return err
				}
				if asJSON {
					if page.Tasks == nil {
						page.Tasks = []store.Task{}
					}
					return writeJSONLine(e.stdout, page)
				}
				tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATUS\tCAPABILITY\tSOURCE\tCREATED\tTITLE")
				for _, k := range page.Tasks {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Status, k.Capability, k.Source,
						k.CreatedAt.Local().Format("2006-01-02 15:04"), oneLine(k.Title))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				if page.Next != "" {
					fmt.Fprintf(e.stderr, "more tasks: --cursor %s\n", page.Next)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only tasks in this status (open, planning, awaiting_approval, running, done, failed, cancelled, expired)")
	cmd.Flags().StringVar(&source, "source", "", "only tasks from this channel (line, web, api, workflow)")
	cmd.Flags().IntVar(&limit, "limit", store.DefaultListLimit, fmt.Sprintf("at most this many tasks (1 to %d)", store.MaxListLimit))
	cmd.Flags().StringVar(&cursor, "cursor", "", "continue a listing: the \"next\" of the previous page")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the page as JSON ({\"data\": [...], \"next\": ...})")
	return cmd
}

func tasksShowCmd(e *env, workspace *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a task with its approvals, steps, events and runs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withTasks(cmd.Context(), *workspace, func(t tasksEnv) error {
				v, err := t.svc.Get(cmd.Context(), t.ws.ID, args[0])
				if errors.Is(err, store.ErrNotFound) {
					return noTask(args[0], t.ws)
				}
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSONLine(e.stdout, v)
				}
				return writeTaskView(e.stdout, v)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the task and everything about it as JSON")
	return cmd
}

func noTask(id string, ws store.Workspace) error {
	return fmt.Errorf("task %q does not exist in workspace %q; list them with agentcraft tasks list --workspace %s", id, ws.Name, ws.Name)
}

// writeTaskView prints a task's fields, then a table per part.
func writeTaskView(w io.Writer, v task.View) error {
	k := v.Task
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "ID\t%s\n", k.ID)
	fmt.Fprintf(tw, "TITLE\t%s\n", oneLine(k.Title))
	fmt.Fprintf(tw, "STATUS\t%s\n", k.Status)
	fmt.Fprintf(tw, "CAPABILITY\t%s\n", k.Capability)
	fmt.Fprintf(tw, "SOURCE\t%s\n", k.Source)
	fmt.Fprintf(tw, "CREATED BY\t%s\n", cmp.Or(k.CreatedBy, "-"))
	fmt.Fprintf(tw, "CREATED\t%s\n", k.CreatedAt.Local().Format("2006-01-02 15:04:05"))
	fmt.Fprintf(tw, "UPDATED\t%s\n", k.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
	if err := tw.Flush(); err != nil {
		return err
	}
	section := func(title, header string, n int, row func(i int) string) error {
		fmt.Fprintf(w, "\n%s\n", title)
		if n == 0 {
			fmt.Fprintln(w, "(none)")
			return nil
		}
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, header)
		for i := range n {
			fmt.Fprintln(tw, row(i))
		}
		return tw.Flush()
	}
	if err := section("APPROVALS", "ID\tCAPABILITY\tSTATUS\tSUMMARY", len(v.Approvals), func(i int) string {
		a := v.Approvals[i]
		return fmt.Sprintf("%s\t%s\t%s\t%s", a.ID, a.Capability, a.Status, oneLine(a.Summary))
	}); err != nil {
		return err
	}
	if err := section("STEPS", "SEQ\tTOOL\tSTATUS\tERROR", len(v.Steps), func(i int) string {
		s := v.Steps[i]
		return fmt.Sprintf("%d\t%s\t%s\t%s", s.Seq, cmp.Or(s.Tool, "-"), s.Status, cmp.Or(oneLine(s.Error), "-"))
	}); err != nil {
		return err
	}
	if err := section("EVENTS", "SEQ\tTYPE\tACTOR", len(v.Events), func(i int) string {
		ev := v.Events[i]
		return fmt.Sprintf("%d\t%s\t%s", ev.Seq, ev.Type, cmp.Or(ev.Actor, "-"))
	}); err != nil {
		return err
	}
	return section("RUNS", "ID\tSTATUS", len(v.Runs), func(i int) string {
		r := v.Runs[i]
		return fmt.Sprintf("%s\t%s", r.ID, r.Status)
	})
}

// oneLine keeps a table row on one line whatever a title holds.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func tasksDecideCmd(e *env, workspace *string, approve bool) *cobra.Command {
	verb, past := "approve", "approved"
	short := "Approve a task's pending approval; a running server resumes its run within seconds"
	if !approve {
		verb, past = "reject", "rejected"
		short = "Reject a task's pending approval; a running server cancels its run within seconds"
	}
	var approvalID, comment string
	cmd := &cobra.Command{
		Use:   verb + " ID",
		Short: short,
		Long: short + ".\n\nWithout --approval the task's only pending approval is decided (a task with\n" +
			"a single approval: that one, so deciding again says it was already decided).\n" +
			"The command line acts as the installation's owner, audited as \"cli\".",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return e.withTasks(ctx, *workspace, func(t tasksEnv) error {
				a, err := approvalToDecide(ctx, t, args[0], approvalID)
				if err != nil {
					return err
				}
				got, err := t.svc.Decide(ctx, task.Decision{WorkspaceID: t.ws.ID, ApprovalID: a.ID, Approve: approve, Comment: comment,
					Approver: task.Requester{Role: identity.CLI.Grant.Role, Actor: identity.CLI.ID}})
				switch {
				case errors.Is(err, task.ErrExpired):
					when := "before the decision"
					if got.ExpiresAt != nil {
						when = "at " + got.ExpiresAt.Local().Format("2006-01-02 15:04:05 MST")
					}
					return fmt.Errorf("approval %s of task %s expired %s; it can no longer be %s, and the task has expired", a.ID, args[0], when, past)
				case errors.Is(err, store.ErrConflict):
					return fmt.Errorf("approval %s of task %s was %s already%s; it cannot be %s now", a.ID, args[0], got.Status, decidedBy(got), past)
				case err != nil:
					return fmt.Errorf("%s approval %s of task %s: %w", verb, a.ID, args[0], err)
				}
				if a.Status == got.Status {
					fmt.Fprintf(e.stdout, "already %s %s: %s\n", past, got.ID, oneLine(got.Summary))
					return nil
				}
				fmt.Fprintf(e.stdout, "%s %s: %s\n", past, got.ID, oneLine(got.Summary))
				next := "resumes its run"
				if !approve {
					next = "cancels its run and the task"
				}
				fmt.Fprintf(e.stderr, "recorded; a running server %s within seconds (otherwise when it next starts)\n", next)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&approvalID, "approval", "", "the approval to decide (default: the task's only pending one)")
	cmd.Flags().StringVar(&comment, "comment", "", "why, kept in the audit log")
	return cmd
}

// decidedBy says who decided a, and when, for an error message.
func decidedBy(a store.Approval) string {
	var s string
	if a.ApproverUserID != "" {
		s += " by " + a.ApproverUserID
	}
	if a.DecidedAt != nil {
		s += " at " + a.DecidedAt.Local().Format(time.DateTime)
	}
	return s
}

// approvalToDecide finds the approval of task taskID a decision is about:
// the named one, which must be the task's; else the task's only pending
// one; else, when the task has a single approval at all, that one (so
// repeating a decision says it was made already instead of finding
// nothing pending).
func approvalToDecide(ctx context.Context, t tasksEnv, taskID, approvalID string) (store.Approval, error) {
	if _, err := t.svc.Task(ctx, t.ws.ID, taskID); errors.Is(err, store.ErrNotFound) {
		return store.Approval{}, noTask(taskID, t.ws)
	} else if err != nil {
		return store.Approval{}, err
	}
	if approvalID != "" {
		a, err := t.svc.Approval(ctx, t.ws.ID, approvalID)
		if errors.Is(err, store.ErrNotFound) || err == nil && a.TaskID != taskID {
			return store.Approval{}, fmt.Errorf("approval %q of task %q does not exist in workspace %q; see agentcraft tasks show %s", approvalID, taskID, t.ws.Name, taskID)
		}
		return a, err
	}
	all, err := t.svc.Approvals(ctx, t.ws.ID, store.ApprovalFilter{TaskID: taskID, Limit: store.MaxListLimit})
	if err != nil {
		return store.Approval{}, err
	}
	var pending []string
	for _, a := range all {
		if a.Status == store.ApprovalPending {
			pending = append(pending, a.ID)
		}
	}
	switch {
	case len(pending) == 1:
		for _, a := range all {
			if a.ID == pending[0] {
				return a, nil
			}
		}
	case len(pending) > 1:
		return store.Approval{}, fmt.Errorf("task %q has %d pending approvals (%s); name one with --approval", taskID, len(pending), strings.Join(pending, ", "))
	case len(all) == 1:
		return all[0], nil
	case len(all) == 0:
		return store.Approval{}, fmt.Errorf("task %q has no approval to decide", taskID)
	}
	return store.Approval{}, fmt.Errorf("task %q has no pending approval (its %d approvals are decided); see agentcraft tasks show %s", taskID, len(all), taskID)
}
