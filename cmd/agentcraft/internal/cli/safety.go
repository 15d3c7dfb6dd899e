package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/agentcraftlab/agentcraft/guard"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/pii"
)

// errGuardBlocked is guard check's error when the decision is block.
var errGuardBlocked = errors.New("guard check: the text is blocked (decision above)")

// maxStdin bounds what pii scan and guard check read.
const maxStdin = 32 << 20

func readStdin(cmd *cobra.Command) (string, error) {
	b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), maxStdin+1))
	if err != nil {
		return "", fmt.Errorf("read standard input: %w", err)
	}
	if len(b) > maxStdin {
		return "", fmt.Errorf("standard input is larger than %d MiB", maxStdin>>20)
	}
	return string(b), nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func piiCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "pii", Short: "Find or mask personal data in text"}
	var locales []string
	var mode string
	var threshold float64
	scan := &cobra.Command{
		Use:   "scan",
		Short: "Read text on stdin; print the personal data found as JSON (--mode mask: the masked text)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := pii.New(&pii.Options{Locales: locales, Threshold: threshold})
			if err != nil {
				return err
			}
			if len(locales) > 0 && !slices.ContainsFunc(locales, func(l string) bool { return strings.EqualFold(l, "Global") }) {
				fmt.Fprintf(e.stderr, "note: --locales %s leaves out the Global rules (email, credit card, IP address, ...); "+
					"add Global to scan for them too: --locales Global,%s\n", strings.Join(locales, ","), strings.Join(locales, ","))
			}
			text, err := readStdin(cmd)
			if err != nil {
				return err
			}
			switch mode {
			case "", "scan":
				type entity struct {
					Type   string  `json:"type"`
					Locale string  `json:"locale"`
					Rule   string  `json:"rule"`
					Start  int     `json:"start"`
					End    int     `json:"end"`
					Score  float64 `json:"score"`
				}
				out := []entity{}
				for _, en := range s.Scan(text) {
					out = append(out, entity{en.Type, en.Locale, en.Rule, en.Start, en.End, en.Score})
				}
				return writeJSON(e.stdout, out)
			case "mask", "redact":
				m := pii.Reversible
				if mode == "redact" {
					m = pii.Irreversible
				}
				masker, err := pii.NewMasker(s, &pii.MaskerOptions{Mode: m})
				if err != nil {
					return err
				}
				masked, _ := masker.Mask(text)
				_, err = io.WriteString(e.stdout, masked)
				return err
			}
			return fmt.Errorf("--mode %q: use scan (default), mask (typed tokens) or redact (***)", mode)
		},
	}
	scan.Flags().StringSliceVar(&locales, "locales", nil, "locales to scan: Global,TW,JP,KR,US,UK (default all); a list without Global leaves out its rules (email, card, ...), with a note on stderr")
	scan.Flags().StringVar(&mode, "mode", "scan", "scan (JSON list of entities), mask ([EMAIL_1] tokens) or redact (***)")
	scan.Flags().Float64Var(&threshold, "threshold", 0, "minimum confidence in (0,1] (default 0.5)")
	cmd.AddCommand(scan)
	return cmd
}

func guardCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "guard", Short: "Check text against guardrail rules"}
	var injection, output bool
	var file string
	check := &cobra.Command{
		Use:   "check",
		Short: "Read a user message on stdin; print the guard decision as JSON; exit 1 when it blocks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var gs middleware.GuardSettings
			if file != "" {
				b, err := os.ReadFile(file)
				if err != nil {
					return fmt.Errorf("read guard rules: %w", err)
				}
				dec := yaml.NewDecoder(strings.NewReader(string(b)))
				dec.KnownFields(true)
				if err := dec.Decode(&gs); err != nil && err != io.EOF {
					return fmt.Errorf("%s: %w", file, err)
				}
			}
			gs.Injection = gs.Injection || injection
			f, err := gs.Policy()
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			text, err := readStdin(cmd)
			if err != nil {
				return err
			}
			in := guard.Input{Direction: guard.DirectionInput, Messages: []guard.Message{{Role: "user", Text: text}}}
			if output {
				in = guard.Input{Direction: guard.DirectionOutput, Messages: []guard.Message{{Role: "assistant", Text: text}}}
			}
			d := f.Check(cmd.Context(), in)
			type match struct {
				Rule   string `json:"rule"`
				Kind   string `json:"kind"`
				Match  string `json:"match"`
				Action string `json:"action"`
			}
			out := struct {
				Action  string  `json:"action"`
				Message string  `json:"message,omitempty"`
				Matches []match `json:"matches"`
			}{Action: d.Action.String(), Message: d.Message, Matches: []match{}}
			for _, m := range d.Matches {
				out.Matches = append(out.Matches, match{m.Rule, fmt.Sprint(m.Kind), m.Match, m.Action.String()})
			}
			if err := writeJSON(e.stdout, out); err != nil {
				return err
			}
			if d.Action == guard.Block {
				// Exit 1, so that a script or a CI step can act on a block.
				return errGuardBlocked
			}
			return nil
		},
	}
	check.Flags().BoolVar(&injection, "injection", false, "turn on prompt-injection detection")
	check.Flags().BoolVar(&output, "output", false, "check the text as model output instead of a user message")
	check.Flags().StringVar(&file, "rules", "", "YAML file in the format of the guard key of agentcraft.yaml: {rules: [{name, keywords|pattern, action, message, direction}], injection, topics, block_message}")
	cmd.AddCommand(check)
	return cmd
}
