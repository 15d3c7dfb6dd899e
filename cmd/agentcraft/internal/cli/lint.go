package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/internal/database"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/nodes"
)

func lintCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "lint FILE",
		Short: "Check a workflow definition (JSON or YAML) without running it",
		Long: `Lint parses a workflow definition, prints every validation problem as
PATH: MESSAGE (hint: HINT) and every design warning as
warning: PATH: MESSAGE (hint: HINT).

With --config, agent nodes must name an agent that exists: one of the
file's agents or, when the configured database exists, one stored in its
server.workspace.

It exits 1 when the file cannot be read or parsed or has a problem;
warnings alone exit 0 and print the strategy the engine would use.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			def, err := readDefinition(args[0])
			if err != nil {
				return err
			}
			reg, err := builtinRegistry()
			if err != nil {
				return err
			}
			probs := workflow.Validate(def, reg)
			if e.configPath != "" && len(probs) == 0 {
				names, err := e.agentNames(cmd.Context())
				if err != nil {
					return err
				}
				probs = workflow.CheckAgents(def, reg, names)
			}
			var plan *workflow.Plan
			if len(probs) == 0 {
				// Preparing finds what only a plan reveals (compound
				// bodies, expressions that do not compile), so lint
				// accepts exactly what run and the server accept.
				plan, err = workflow.NewEngine(reg, workflow.Services{}, nil).Prepare(def)
				if err != nil {
					p, ok := invalidProblems(err)
					if !ok {
						return err
					}
					probs = p
				}
			}
			printProblems(e.stdout, probs)
			for _, w := range workflow.Lint(def, reg) {
				fmt.Fprintf(e.stdout, "warning: %s\n", hinted(w.Path, w.Message, w.Hint))
			}
			if len(probs) > 0 {
				return fmt.Errorf("%s: %d %s", args[0], len(probs), plural(len(probs), "problem", "problems"))
			}
			fmt.Fprintf(e.stdout, "ok: %s: %d %s, strategy %s\n", def.Name, len(def.Nodes), plural(len(def.Nodes), "node", "nodes"), plan.Strategy)
			return nil
		},
	}
}

// agentNames are the agents a workflow of the configuration may name: the
// file's, and the stored ones of its workspace when its database exists
// (lint never creates one).
func (e *env) agentNames(ctx context.Context) ([]string, error) {
	cfg, err := e.load()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, a := range cfg.Agents {
		names = append(names, a.Name)
	}
	u, err := parseDatabase(cfg.Database.URL)
	if err != nil {
		return nil, err
	}
	if u.Kind == database.SQLite {
		if _, err := os.Stat(u.Path); err != nil {
			fmt.Fprintf(e.stderr, "note: no database at %s yet, so only the file's agents were checked\n", u.Path)
			return names, nil
		}
	}
	o, err := openDatabase(ctx, u, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	defer o.close()
	st := o.st
	ws, err := st.Workspaces().GetByName(ctx, cfg.Server.Workspace)
	if errors.Is(err, store.ErrNotFound) {
		return names, nil
	}
	if err != nil {
		return nil, err
	}
	stored, err := st.Agents().List(ctx, ws.ID)
	if err != nil {
		return nil, err
	}
	for _, a := range stored {
		names = append(names, a.Name)
	}
	return names, nil
}

// readDefinition reads and parses the workflow file at path.
func readDefinition(path string) (*workflow.Definition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read workflow: %w", err)
	}
	def, err := workflow.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return def, nil
}

// builtinRegistry returns the registry of the built-in node kinds, which
// the engine of serve and run uses too.
func builtinRegistry() (*workflow.Registry, error) {
	reg := workflow.NewRegistry()
	if err := nodes.RegisterBuiltins(reg); err != nil {
		return nil, err
	}
	return reg, nil
}

func printProblems(w io.Writer, probs []workflow.Problem) {
	for _, p := range probs {
		fmt.Fprintln(w, hinted(p.Path, p.Message, p.Hint))
	}
}

// invalidProblems returns the problems of an *workflow.InvalidError in err.
func invalidProblems(err error) ([]workflow.Problem, bool) {
	var inv *workflow.InvalidError
	if !errors.As(err, &inv) {
		return nil, false
	}
	return inv.Problems, true
}

func hinted(path, msg, hint string) string {
	s := path + ": " + msg
	if hint != "" {
		s += " (hint: " + hint + ")"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
