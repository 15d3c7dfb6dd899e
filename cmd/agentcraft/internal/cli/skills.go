package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/skill"
	"github.com/agentcraftlab/agentcraft/store"
)

// skillsCmd lists a workspace's skills and imports one from a folder, a
// zip or a lone SKILL.md, through the same skill.Service serve uses, its
// changes written to the audit log at once by the CLI.
func skillsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "skills", Short: "List and import skills (Agent Skills: a folder with a SKILL.md)"}
	var workspace string
	var replace bool
	service := func(st store.Store) *skill.Service {
		return skill.New(st.Skills(), &skill.Options{Audit: func(ctx context.Context, ev store.AuditEvent) { e.auditKey(ctx, st, ev) }})
	}

	list := &cobra.Command{
		Use:   "list",
		Short: "List the built-in and the workspace's skills",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withWorkspaceStore(cmd.Context(), workspace, false, func(st store.Store, ws store.Workspace) error {
				skills, err := service(st).List(cmd.Context(), ws.ID)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tORIGIN\tDESCRIPTION")
				for _, s := range skills {
					origin := "workspace"
					if s.Builtin {
						origin = "built-in"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, origin, shorten(s.Description, 80))
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().StringVar(&workspace, "workspace", "default", "workspace")

	imp := &cobra.Command{
		Use:   "import DIR|ZIP|SKILL.md",
		Short: "Import a skill from its folder, a zip of it, or a lone SKILL.md",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sk, err := readSkill(args[0])
			if err != nil {
				return err
			}
			return e.withWorkspaceStore(cmd.Context(), workspace, false, func(st store.Store, ws store.Workspace) error {
				out, created, err := service(st).Import(cmd.Context(), ws.ID, sk, replace)
				if err != nil {
					return fmt.Errorf("import %s: %w", args[0], err)
				}
				verb := "replaced"
				if created {
					verb = "imported"
				}
				fmt.Fprintf(e.stdout, "%s skill %s (%d files) in workspace %q\n", verb, out.Name, len(out.Files), ws.Name)
				return nil
			})
		},
	}
	imp.Flags().StringVar(&workspace, "workspace", "default", "workspace")
	imp.Flags().BoolVar(&replace, "replace", false, "replace a skill of the same name")
	cmd.AddCommand(list, imp)
	return cmd
}

// readSkill reads the skill at path: a folder (named as the skill), a
// .zip, or a SKILL.md.
func readSkill(path string) (skill.Skill, error) {
	info, err := os.Stat(path)
	if err != nil {
		return skill.Skill{}, err
	}
	if info.IsDir() {
		abs, err := filepath.Abs(path)
		if err != nil {
			return skill.Skill{}, err
		}
		return skill.FromFS(os.DirFS(abs), filepath.Base(abs), nil)
	}
	if strings.EqualFold(filepath.Ext(path), ".md") {
		if lim := skill.DefaultLimits.MaxFileBytes; info.Size() > lim {
			return skill.Skill{}, fmt.Errorf("%s is %d bytes; a SKILL.md may have %d", path, info.Size(), lim)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return skill.Skill{}, err
		}
		return skill.Parse(data)
	}
	f, err := os.Open(path)
	if err != nil {
		return skill.Skill{}, err
	}
	defer f.Close()
	return skill.FromZip(f, info.Size(), nil)
}

// shorten cuts s to n characters on one line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
