package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/search/embed"
	"github.com/agentcraftlab/agentcraft/search/eval"
	"github.com/agentcraftlab/agentcraft/store"
)

// kbEnv is what a kb subcommand works with.
type kbEnv struct {
	svc *kb.Service
	ws  store.Workspace
}

// withKB opens the configured store (migrating it) and its search engine,
// finds the workspace (creating it when create is set) and calls fn.
func (e *env) withKB(ctx context.Context, workspace string, create bool, fn func(k kbEnv) error) error {
	cfg, err := e.load()
	if err != nil {
		return err
	}
	if workspace == "" {
		workspace = cfg.Server.Workspace
	}
	logger := newLogger(e.stderr, cfg.Log)
	o, err := openConfigured(ctx, cfg.Database.URL, logger)
	if err != nil {
		return err
	}
	defer o.close()
	st := o.st
	svc, _, closeKnowledge, err := openKnowledge(ctx, cfg, o, logger)
	if err != nil {
		return err
	}
	defer closeKnowledge()
	var ws store.Workspace
	if create {
		ws, err = st.Workspaces().GetOrCreate(ctx, workspace)
	} else {
		ws, err = st.Workspaces().GetByName(ctx, workspace)
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("workspace %q does not exist: create a knowledge base in it first (agentcraft kb create --workspace %s NAME)", workspace, workspace)
	}
	if err != nil {
		return fmt.Errorf("workspace %q: %w", workspace, err)
	}
	return fn(kbEnv{svc: svc, ws: ws})
}

// newEmbedder builds the configured embedder, or nil when none is.
func newEmbedder(c config.Embedder) (search.Embedder, error) {
	if c.Model == "" {
		return nil, nil
	}
	emb, err := embed.New(&embed.Options{BaseURL: c.BaseURL, APIKey: c.APIKey, Model: c.Model, Dimension: c.Dimensions})
	if err != nil {
		return nil, fmt.Errorf("search.embedder: %w", err)
	}
	return emb, nil
}

func kbCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kb",
		Short: "Knowledge bases: create, ingest, search, evaluate",
		Long: "Knowledge bases are searchable collections of documents. These commands work directly\n" +
			"on the database of the configuration (no server needed).",
	}
	var workspace string
	cmd.PersistentFlags().StringVar(&workspace, "workspace", "", "workspace (default: server.workspace of the configuration, \"default\")")
	cmd.AddCommand(kbCreateCmd(e, &workspace), kbListCmd(e, &workspace), kbDeleteCmd(e, &workspace),
		kbIngestCmd(e, &workspace), kbSearchCmd(e, &workspace), kbEvalCmd(e, &workspace))
	return cmd
}

func kbCreateCmd(e *env, workspace *string) *cobra.Command {
	var description string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a knowledge base (NAME: letters, digits, _ - ., at most 64)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withKB(cmd.Context(), *workspace, true, func(k kbEnv) error {
				base, err := k.svc.Create(cmd.Context(), k.ws.ID, args[0], description)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSONLine(e.stdout, base)
				}
				fmt.Fprintf(e.stdout, "created knowledge base %s (id %s, index %s)\n", base.Name, base.ID, base.IndexName)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "what the base holds")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the base as JSON")
	return cmd
}

func kbListCmd(e *env, workspace *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the workspace's knowledge bases",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withKB(cmd.Context(), *workspace, true, func(k kbEnv) error {
				bases, err := k.svc.List(cmd.Context(), k.ws.ID)
				if err != nil {
					return err
				}
				if asJSON {
					for _, b := range bases {
						if err := writeJSONLine(e.stdout, b); err != nil {
							return err
						}
					}
					return nil
				}
				tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tID\tDOCUMENTS\tCHUNKS\tUPDATED\tDESCRIPTION")
				for _, b := range bases {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", b.Name, b.ID, b.Documents, b.Chunks, b.UpdatedAt.Local().Format("2006-01-02 15:04"), b.Description)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per base")
	return cmd
}

func kbDeleteCmd(e *env, workspace *string) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a knowledge base and its search index",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withKB(cmd.Context(), *workspace, false, func(k kbEnv) error {
				if err := k.svc.Delete(cmd.Context(), k.ws.ID, args[0]); err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, "deleted knowledge base", args[0])
				return nil
			})
		},
	}
}

// inputFile is one file to ingest: where it is and the name it is
// ingested under.
type inputFile struct {
	path, name string
	size       int64
}

// collectFiles expands paths: a file is ingested under its base name, a
// directory's files under the directory's name and their path inside it
// ("docs/guide/intro.md"). Hidden files and directories are skipped. Two
// inputs that would get the same name are an error, since the second would
// replace the first.
func collectFiles(paths []string) ([]inputFile, error) {
	var out []inputFile
	seen := map[string]string{}
	add := func(path, name string, size int64) error {
		name = filepath.ToSlash(name)
		if prev, ok := seen[name]; ok {
			return fmt.Errorf("%s and %s would both be ingested as %q: ingest them separately or rename one", prev, path, name)
		}
		seen[name] = path
		out = append(out, inputFile{path: path, name: name, size: size})
		return nil
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, unwrapPathError(err))
		}
		if !fi.IsDir() {
			if err := add(p, filepath.Base(p), fi.Size()); err != nil {
				return nil, err
			}
			continue
		}
		root := filepath.Clean(p)
		base := filepath.Base(root)
		if base == "." || base == string(filepath.Separator) {
			base = ""
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != root && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			return add(path, filepath.Join(base, rel), info.Size())
		})
		if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no files found: name files or directories holding them")
	}
	return out, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ingestProgress reports ingestion: a bar on a terminal, lines otherwise.
type ingestProgress struct {
	bar   *progressbar.ProgressBar // nil when w is not a terminal
	w     io.Writer
	total int64
	done  int64 // bytes of the files finished
}

func newIngestProgress(w io.Writer, files []inputFile) *ingestProgress {
	p := &ingestProgress{w: w}
	for _, f := range files {
		p.total += f.size
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions64(max(p.total, 1),
			progressbar.OptionSetWriter(w),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

// start announces file i of n.
func (p *ingestProgress) start(i, n int, f inputFile) {
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("[%d/%d] %s", i+1, n, ellipsis(f.name, 30)))
	}
}

// chunks moves the bar within the current file.
func (p *ingestProgress) chunks(f inputFile, indexed, total int) {
	if p.bar != nil && total > 0 {
		_ = p.bar.Set64(p.done + f.size*int64(indexed)/int64(total))
	}
}

// finish reports file i's outcome.
func (p *ingestProgress) finish(i, n int, f inputFile, res kb.IngestResult, err error) {
	p.done += f.size
	if p.bar != nil {
		_ = p.bar.Set64(p.done)
		if err == nil && len(res.Warnings) == 0 {
			return
		}
		// Print the problem above the bar.
		_ = p.bar.Clear()
	}
	switch {
	case err != nil:
		fmt.Fprintf(p.w, "[%d/%d] %s: FAILED: %v\n", i+1, n, f.name, err)
	case p.bar == nil:
		fmt.Fprintf(p.w, "[%d/%d] %s: %d documents, %d chunks\n", i+1, n, f.name, res.Documents, res.Chunks)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(p.w, "[%d/%d] %s: warning: %s\n", i+1, n, f.name, w)
	}
}

func (p *ingestProgress) close() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

func kbIngestCmd(e *env, workspace *string) *cobra.Command {
	var base string
	cmd := &cobra.Command{
		Use:   "ingest --kb NAME PATH...",
		Short: "Extract, chunk and index files and directories into a knowledge base",
		Long: "Ingest files (txt, md, html, pdf, docx, csv, json, zip ...) and directories (walked; hidden\n" +
			"files skipped) into a knowledge base. A .jsonl file of {\"_id\",\"title\",\"text\"} lines is\n" +
			"indexed one document per line. Ingesting a name again replaces its previous content.\n" +
			"Exits non-zero when any file failed.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if base == "" {
				return errors.New("kb ingest: --kb is required: name the knowledge base (see agentcraft kb list)")
			}
			files, err := collectFiles(args)
			if err != nil {
				return fmt.Errorf("kb ingest: %w", err)
			}
			return e.withKB(cmd.Context(), *workspace, false, func(k kbEnv) error {
				ctx := cmd.Context()
				target, err := k.svc.Resolve(ctx, k.ws.ID, base)
				if err != nil {
					return err
				}
				prog := newIngestProgress(e.stderr, files)
				start := time.Now()
				var docs, chunks int
				var failed []string
				for i, f := range files {
					prog.start(i, len(files), f)
					res, err := ingestFile(ctx, k.svc, target, f, prog)
					prog.finish(i, len(files), f, res, err)
					if err != nil {
						if ctx.Err() != nil {
							prog.close()
							return fmt.Errorf("kb ingest: interrupted at %s: %w", f.name, ctx.Err())
						}
						failed = append(failed, f.name)
						continue
					}
					docs += res.Documents
					chunks += res.Chunks
				}
				prog.close()
				elapsed := time.Since(start)
				fmt.Fprintf(e.stdout, "ingested %d files into %s: %d documents, %d chunks, %d failed in %s (%.0f docs/s)\n",
					len(files)-len(failed), target.Name, docs, chunks, len(failed), elapsed.Round(time.Millisecond), float64(docs)/max(elapsed.Seconds(), 1e-9))
				if len(failed) > 0 {
					return fmt.Errorf("kb ingest: %d of %d files failed: %s", len(failed), len(files), strings.Join(failed, ", "))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&base, "kb", "", "knowledge base name or id (required)")
	return cmd
}

func ingestFile(ctx context.Context, svc *kb.Service, target store.KnowledgeBase, f inputFile, prog *ingestProgress) (kb.IngestResult, error) {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return kb.IngestResult{}, fmt.Errorf("read: %w", unwrapPathError(err))
	}
	return svc.IngestProgress(ctx, target, f.name, data, func(indexed, total int) { prog.chunks(f, indexed, total) })
}

func kbSearchCmd(e *env, workspace *string) *cobra.Command {
	var (
		bases  []string
		mode   string
		topK   int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "search --kb NAME [--kb NAME2] QUERY...",
		Short: "Search one or more knowledge bases",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := kbQuery(bases, mode, topK)
			if err != nil {
				return fmt.Errorf("kb search: %w", err)
			}
			q.Text = strings.Join(args, " ")
			return e.withKB(cmd.Context(), *workspace, false, func(k kbEnv) error {
				res, err := k.svc.Search(cmd.Context(), k.ws.ID, bases, q)
				if errors.Is(err, search.ErrNoEmbedder) {
					return fmt.Errorf("%w (set search.embedder in the configuration, then ingest again)", err)
				}
				if err != nil {
					return err
				}
				if res.Note != "" {
					fmt.Fprintln(e.stderr, "note:", res.Note)
				}
				if asJSON {
					for i, h := range res.Hits {
						if err := writeJSONLine(e.stdout, hitJSON(i+1, h)); err != nil {
							return err
						}
					}
					return nil
				}
				if len(res.Hits) == 0 {
					fmt.Fprintln(e.stdout, "no hits")
					return nil
				}
				tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "RANK\tSCORE\tKB\tID\tSOURCE\tPAGE\tSNIPPET")
				for i, h := range res.Hits {
					page := h.Metadata["page"]
					if page == "" {
						page = "-"
					}
					fmt.Fprintf(tw, "%d\t%.4f\t%s\t%s\t%s\t%s\t%s\n", i+1, h.Score, h.Metadata["kb"], h.ID, h.Metadata["source"], page, snippet(h.Title, h.Text, 80))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringArrayVar(&bases, "kb", nil, "knowledge base name or id (repeat to search several)")
	cmd.Flags().StringVar(&mode, "mode", "", "fulltext, vector or hybrid (default: hybrid with an embedder, else fulltext)")
	cmd.Flags().IntVar(&topK, "top-k", search.DefaultTopK, "number of hits")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per hit")
	return cmd
}

// kbQuery checks the flags shared by search and eval.
func kbQuery(bases []string, mode string, topK int) (search.Query, error) {
	if len(bases) == 0 {
		return search.Query{}, errors.New("--kb is required: name the knowledge base (repeat --kb for several)")
	}
	m, err := kb.ParseMode(mode)
	if err != nil {
		return search.Query{}, fmt.Errorf("--mode: %w", err)
	}
	if topK <= 0 {
		return search.Query{}, fmt.Errorf("--top-k is %d: use a positive number", topK)
	}
	return search.Query{Mode: m, TopK: topK}, nil
}

// hitJSON is a hit as `kb search --json` prints it.
func hitJSON(rank int, h search.Hit) map[string]any {
	out := map[string]any{
		"rank":   rank,
		"id":     h.ID,
		"kb":     h.Metadata["kb"],
		"score":  h.Score,
		"source": h.Metadata["source"],
		"text":   h.Text,
	}
	if h.Title != "" {
		out["title"] = h.Title
	}
	if p, err := strconv.Atoi(h.Metadata["page"]); err == nil {
		out["page"] = p
	}
	return out
}

// snippet is the start of title and text on one line, at most n runes.
func snippet(title, text string, n int) string {
	s := text
	if title != "" {
		s = title + ": " + text
	}
	return ellipsis(strings.Join(strings.Fields(s), " "), n)
}

func ellipsis(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// writeJSONLine writes v as one line of JSON (JSON Lines).
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func kbEvalCmd(e *env, workspace *string) *cobra.Command {
	var (
		bases                  []string
		mode                   string
		queries, qrels, runOut string
		depth                  int
	)
	cmd := &cobra.Command{
		Use:   "eval --kb NAME --queries queries.tsv --qrels qrels.txt",
		Short: "Measure retrieval quality (nDCG@10, MAP, Recall@100) against relevance judgments",
		Long: "Run every query of a TREC/BEIR test collection against the knowledge bases and score the\n" +
			"ranking. queries: \"id<TAB>text\" lines; qrels: \"qid iter docid rel\" lines (TREC); the\n" +
			"documents are matched by id, so ingest the collection's corpus.jsonl first.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := kbQuery(bases, mode, depth)
			if err != nil {
				return fmt.Errorf("kb eval: %w", err)
			}
			if queries == "" || qrels == "" {
				return errors.New("kb eval: --queries and --qrels are required")
			}
			topics, err := readWith(queries, eval.ReadQueries)
			if err != nil {
				return fmt.Errorf("kb eval: --queries: %w", err)
			}
			judged, err := readWith(qrels, eval.ReadQrels)
			if err != nil {
				return fmt.Errorf("kb eval: --qrels: %w", err)
			}
			return e.withKB(cmd.Context(), *workspace, false, func(k kbEnv) error {
				ctx := cmd.Context()
				start := time.Now()
				run := make(eval.Run, len(topics))
				var note string
				for _, t := range topics {
					qt := q
					qt.Text = t.Text
					res, err := k.svc.Search(ctx, k.ws.ID, bases, qt)
					if err != nil {
						return fmt.Errorf("kb eval: query %s: %w", t.ID, err)
					}
					if res.Note != "" {
						note = res.Note
					}
					ranked := make([]eval.Ranked, len(res.Hits))
					for i, h := range res.Hits {
						ranked[i] = eval.Ranked{DocID: h.ID, Score: h.Score}
					}
					run[t.ID] = ranked
				}
				elapsed := time.Since(start)
				if note != "" {
					fmt.Fprintln(e.stderr, "note:", note)
				}
				if runOut != "" {
					f, err := os.Create(runOut)
					if err != nil {
						return fmt.Errorf("kb eval: --run-out: %w", err)
					}
					err = eval.WriteTREC(f, run, "agentcraft")
					if cerr := f.Close(); err == nil {
						err = cerr
					}
					if err != nil {
						return fmt.Errorf("kb eval: --run-out: %w", err)
					}
				}
				m := eval.Evaluate(run, judged)
				fmt.Fprintf(e.stdout, "nDCG@10     %.4f\nMAP         %.4f\nRecall@100  %.4f\nqueries     %d judged of %d run (%.1f ms/query)\n",
					m.NDCG10, m.MAP, m.Recall100, m.Queries, len(topics), float64(elapsed.Microseconds())/1000/float64(max(len(topics), 1)))
				return nil
			})
		},
	}
	cmd.Flags().StringArrayVar(&bases, "kb", nil, "knowledge base name or id (repeat to search several)")
	cmd.Flags().StringVar(&mode, "mode", "", "fulltext, vector or hybrid (default: hybrid with an embedder, else fulltext)")
	cmd.Flags().StringVar(&queries, "queries", "", "queries file: id<TAB>text per line (required)")
	cmd.Flags().StringVar(&qrels, "qrels", "", "TREC qrels file: qid iter docid rel per line (required)")
	cmd.Flags().StringVar(&runOut, "run-out", "", "also write the run in TREC format to this file")
	cmd.Flags().IntVar(&depth, "depth", 100, "hits retrieved per query (Recall@100 needs 100)")
	return cmd
}

// readWith opens path and parses it with read.
func readWith[T any](path string, read func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
