package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/controlplane"
)

// workersCmd lists the processes that execute runs (the workers registry)
// and the run leases they hold.
func workersCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "workers",
		Short: "List the processes executing workflow runs and the run leases they hold",
		Long: "Every `agentcraft worker` (and serve, when it executes runs) heartbeats a row every 5s.\n" +
			"A worker not seen for 15s is shown as gone (its leases expire and other workers take\n" +
			"its runs); gone rows are removed after 10 minutes. A lease owner with no row is shown\n" +
			"as unregistered.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := e.load()
			if err != nil {
				return err
			}
			u, err := parseDatabase(cfg.Database.URL)
			if err != nil {
				return err
			}
			o, err := openDatabase(cmd.Context(), u, newLogger(e.stderr, cfg.Log))
			if err != nil {
				return err
			}
			defer o.close()
			list, err := controlplane.ListWorkers(cmd.Context(), o.st)
			if err != nil {
				return fmt.Errorf("list workers in %s: %w", u, err)
			}
			if asJSON {
				enc := json.NewEncoder(e.stdout)
				for _, w := range list {
					if err := enc.Encode(w); err != nil {
						return err
					}
				}
				return nil
			}
			printWorkers(e.stdout, list, time.Now())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per worker")
	return cmd
}

func printWorkers(w io.Writer, list []controlplane.WorkerStatus, now time.Time) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no workers registered")
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tKIND\tHOST\tPID\tVERSION\tSTARTED\tLAST SEEN\tRUNS")
	for _, s := range list {
		started, seen := "-", "-"
		if !s.StartedAt.IsZero() {
			started = s.StartedAt.Local().Format(time.DateTime)
			seen = now.Sub(s.SeenAt).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%d\n", s.ID, s.Status, dash(s.Kind), dash(s.Host), s.PID, dash(s.Version), started, seen, len(s.Leases))
	}
	tw.Flush()
	var leases [][]string
	for _, s := range list {
		for _, l := range s.Leases {
			until := "-"
			if l.Until != nil {
				until = l.Until.Local().Format(time.DateTime)
				if l.Expired {
					until += " (expired)"
				} else {
					until += fmt.Sprintf(" (in %s)", l.Until.Sub(now).Round(time.Second))
				}
			}
			leases = append(leases, []string{s.ID, l.RunID, dash(l.Node), l.WorkspaceID, until})
		}
	}
	if len(leases) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tRUN\tNODE\tWORKSPACE\tLEASE UNTIL")
	for _, l := range leases {
		fmt.Fprintln(tw, strings.Join(l, "\t"))
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
