package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/trigger"
)

// fileAgents finds agent targets for the triggers command: the
// configuration file's agents, then the stored ones. The command starts
// no runs, so it needs only the names.
type fileAgents struct {
	cfg config.Config
	st  store.Store
}

func (a fileAgents) GetAgent(ctx context.Context, workspaceID, name string) (store.Agent, error) {
	for _, fa := range a.cfg.Agents {
		if fa.Name == name {
			return store.Agent{Name: name}, nil
		}
	}
	return a.st.Agents().GetByName(ctx, workspaceID, name)
}

// withTriggers opens the configured database and master key and builds a
// trigger service whose run service never starts a run (a running server's
// scheduler fires what is created here within seconds).
func (e *env) withTriggers(ctx context.Context, workspace string, fn func(svc *trigger.Service, ws store.Workspace) error) error {
	cfg, err := e.load()
	if err != nil {
		return err
	}
	workspace = cmp.Or(workspace, cfg.Server.Workspace, "default")
	u, err := parseDatabase(cfg.Database.URL)
	if err != nil {
		return err
	}
	logger := newLogger(e.stderr, cfg.Log)
	o, err := openDatabase(ctx, u, logger)
	if err != nil {
		return err
	}
	defer o.close()
	ws, err := findWorkspace(ctx, o.st, cfg, workspace, false)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("workspace %q does not exist in database %s; check --workspace, or pass the server's --config", workspace, u)
	case err != nil:
		return fmt.Errorf("workspace %q in database %s: %w", workspace, u, err)
	}
	key, err := secret.LoadMasterKey(os.Getenv(secret.EnvMasterKey), cfg.Secrets.MasterKeyFile)
	if err != nil {
		return err
	}
	box, err := secret.New(key)
	if err != nil {
		return err
	}
	eng, err := newEngine(cfg, nil, logger)
	if err != nil {
		return err
	}
	runs := controlplane.New(o.st, eng, controlplane.Options{Enqueue: func(context.Context, string, string, bool) error {
		return errors.New("the triggers command starts no runs")
	}})
	svc, err := trigger.New(o.st, runs, box, &trigger.Options{Agents: fileAgents{cfg: cfg, st: o.st}, Audit: func(ctx context.Context, ev store.AuditEvent) {
		ev.Actor = cmp.Or(ev.Actor, "system:cli")
		if err := o.st.AuditLog().Append(ctx, ev); err != nil {
			fmt.Fprintf(e.stderr, "warning: the audit log did not record %s of %s: %v\n", ev.Action, ev.Target, err)
		}
	}})
	if err != nil {
		return err
	}
	return fn(svc, ws)
}

func triggersCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "triggers",
		Short: "Cron schedules and webhooks that start runs: list, create, delete",
		Long: "Triggers start runs of a workflow or an agent on a cron schedule or on a signed webhook\n" +
			"(POST /hooks/{id}). These commands work directly on the database of the configuration;\n" +
			"running servers and workers pick changes up within seconds.",
	}
	var workspace string
	cmd.PersistentFlags().StringVar(&workspace, "workspace", "", "workspace (default: server.workspace of the configuration, \"default\")")
	cmd.AddCommand(triggersListCmd(e, &workspace), triggersCreateCmd(e, &workspace), triggersDeleteCmd(e, &workspace))
	return cmd
}

func triggersListCmd(e *env, workspace *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the workspace's triggers by name",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withTriggers(cmd.Context(), *workspace, func(svc *trigger.Service, ws store.Workspace) error {
				list, err := svc.List(cmd.Context(), ws.ID)
				if err != nil {
					return err
				}
				if asJSON {
					if list == nil {
						list = []store.Trigger{}
					}
					return writeJSONLine(e.stdout, map[string]any{"data": list})
				}
				tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tKIND\tTARGET\tSCHEDULE\tENABLED\tNEXT FIRE")
				now := time.Now()
				for _, t := range list {
					target := "workflow:" + t.WorkflowID
					if t.Agent != "" {
						target = "agent:" + t.Agent
					}
					sched := t.Schedule
					if t.Timezone != "" {
						sched += " (" + t.Timezone + ")"
					}
					if t.Kind == store.TriggerWebhook {
						sched = "/hooks/" + t.ID
					}
					next := "-"
					if at, ok := trigger.NextFire(t, now); ok {
						next = at.Format(time.RFC3339)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\t%s\n", t.ID, t.Name, t.Kind, target, sched, t.Enabled, next)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func triggersCreateCmd(e *env, workspace *string) *cobra.Command {
	var name, schedule, timezone, misfire, workflow, agent, input string
	var webhook, disabled bool
	cmd := &cobra.Command{
		Use:   "create --name NAME (--schedule SPEC | --webhook) (--workflow ID|NAME | --agent NAME)",
		Short: "Create a trigger; a webhook's secret is printed once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sp := trigger.Spec{Name: &name}
			kind := "schedule"
			switch {
			case webhook && schedule != "":
				return errors.New("--webhook and --schedule are both set; a trigger is one kind: choose one")
			case webhook:
				kind = "webhook"
			case schedule == "":
				return errors.New("give --schedule SPEC (such as \"0 9 * * 1-5\") or --webhook")
			}
			sp.Kind = &kind
			for _, f := range []struct {
				v   string
				dst **string
			}{{schedule, &sp.Schedule}, {timezone, &sp.Timezone}, {misfire, &sp.Misfire}, {workflow, &sp.Workflow}, {agent, &sp.Agent}} {
				if f.v != "" {
					v := f.v
					*f.dst = &v
				}
			}
			if input != "" {
				if !json.Valid([]byte(input)) {
					return fmt.Errorf("--input is not JSON; quote a string as '\"text\"'")
				}
				sp.Input = json.RawMessage(input)
			}
			enabled := !disabled
			sp.Enabled = &enabled
			return e.withTriggers(cmd.Context(), *workspace, func(svc *trigger.Service, ws store.Workspace) error {
				t, secret, err := svc.Create(cmd.Context(), ws.ID, sp)
				var fe *trigger.FieldError
				switch {
				case errors.As(err, &fe):
					return fmt.Errorf("--%s: %s", fe.Field, fe.Message)
				case errors.Is(err, store.ErrConflict):
					return fmt.Errorf("--name: a trigger named %q exists in workspace %s already", name, ws.Name)
				case err != nil:
					return err
				}
				out := map[string]any{"trigger": t}
				if secret != "" {
					out["url"] = "/hooks/" + t.ID
					out["secret"] = secret
				}
				return writeJSONLine(e.stdout, out)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "trigger name, unique in the workspace")
	f.StringVar(&schedule, "schedule", "", "cron spec: minute hour day month weekday, an optional leading seconds field, or @hourly, @every 10m")
	f.BoolVar(&webhook, "webhook", false, "a webhook trigger (POST /hooks/{id}, signed)")
	f.StringVar(&timezone, "timezone", "", "IANA time zone of the schedule (default UTC)")
	f.StringVar(&misfire, "misfire", "", "ticks missed while down: skip (default) or catch_up_once")
	f.StringVar(&workflow, "workflow", "", "the workflow to run (id or name)")
	f.StringVar(&agent, "agent", "", "the agent to run (name)")
	f.StringVar(&input, "input", "", "a schedule's run input (JSON)")
	f.BoolVar(&disabled, "disabled", false, "create it disabled")
	return cmd
}

func triggersDeleteCmd(e *env, workspace *string) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a trigger (its runs stay)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withTriggers(cmd.Context(), *workspace, func(svc *trigger.Service, ws store.Workspace) error {
				err := svc.Delete(cmd.Context(), ws.ID, args[0])
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("no trigger %s in workspace %s; see agentcraft triggers list", args[0], ws.Name)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "deleted trigger %s\n", args[0])
				return nil
			})
		},
	}
}
