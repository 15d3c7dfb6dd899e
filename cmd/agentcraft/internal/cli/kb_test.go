package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/search/eval"
)

// kbConfig writes a configuration whose database is a SQLite file in a
// temporary directory and returns "--config PATH" for run.
func kbConfig(t *testing.T) (dir string, args []string) {
	t.Helper()
	dir = t.TempDir()
	cfg := filepath.Join(dir, "agentcraft.yaml")
	body := "database:\n  url: sqlite://" + filepath.ToSlash(filepath.Join(dir, "db", "agentcraft.db")) + "\ndetect_providers: false\nlog: {level: warn}\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, []string{"--config", cfg}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// mustRun runs args and fails the test unless the exit code is 0.
func mustRun(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	code, out, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
	}
	return out, errOut
}

func with(base []string, args ...string) []string {
	return append(append([]string{}, base...), args...)
}

func TestKBCommands(t *testing.T) {
	dir, cfg := kbConfig(t)
	writeFiles(t, dir, map[string]string{
		"notes.txt":          "Octopuses have three hearts and blue blood.",
		"corpus.jsonl":       `{"_id":"v1","title":"Volcanoes","text":"Magma erupts through the crust."}` + "\n" + `{"_id":"g1","title":"Glaciers","text":"Glaciers carve valleys slowly."}` + "\n",
		"docs/space/mars.md": "# Mars\n\nOlympus Mons is the tallest volcano in the solar system.",
		"docs/.hidden.txt":   "should be skipped",
	})

	out, _ := mustRun(t, with(cfg, "kb", "create", "science", "--description", "facts")...)
	if !strings.Contains(out, "created knowledge base science") || !strings.Contains(out, "index ") || !strings.Contains(out, "_kb_") {
		t.Errorf("create printed %q", out)
	}
	out, _ = mustRun(t, with(cfg, "kb", "create", "other", "--json")...)
	var created struct{ ID, Name, IndexName string }
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Name != "other" || created.ID == "" {
		t.Errorf("create --json printed %q (%v)", out, err)
	}
	if code, _, errOut := run(t, with(cfg, "kb", "create", "science")...); code == 0 || !strings.Contains(errOut, "exists") {
		t.Errorf("duplicate create: exit %d, %q", code, errOut)
	}

	out, errOut := mustRun(t, with(cfg, "kb", "ingest", "--kb", "science",
		filepath.Join(dir, "notes.txt"), filepath.Join(dir, "corpus.jsonl"), filepath.Join(dir, "docs"))...)
	// 3 files: notes.txt (1 doc), corpus.jsonl (2 docs), docs/space/mars.md (1 doc).
	if !strings.Contains(out, "ingested 3 files into science: 4 documents, 4 chunks, 0 failed") || !strings.Contains(out, "docs/s") {
		t.Errorf("ingest summary %q", out)
	}
	if strings.Contains(errOut, "hidden") || !strings.Contains(errOut, "docs/space/mars.md") {
		t.Errorf("ingest progress %q: want docs/space/mars.md and no hidden file", errOut)
	}

	out, _ = mustRun(t, with(cfg, "kb", "list")...)
	if !strings.Contains(out, "science") || !strings.Contains(out, "other") {
		t.Errorf("list: %q", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[2], "science") || !strings.Contains(lines[2], "4  ") {
		t.Errorf("list rows: %q", lines)
	}

	for _, tc := range []struct{ query, wantID, source string }{
		{"octopus hearts", "notes.txt#0", "notes.txt"},
		{"magma", "v1", "corpus.jsonl"},
		{"tallest volcano", "docs/space/mars.md#0", "docs/space/mars.md"},
	} {
		out, _ = mustRun(t, with(cfg, "kb", "search", "--kb", "science", "--json", "--top-k", "1", tc.query)...)
		var hit struct {
			Rank           int
			ID, KB, Source string
			Score          float64
		}
		if err := json.Unmarshal([]byte(out), &hit); err != nil {
			t.Fatalf("search --json %q printed %q: %v", tc.query, out, err)
		}
		if hit.ID != tc.wantID || hit.KB != "science" || hit.Source != tc.source || hit.Rank != 1 || hit.Score <= 0 {
			t.Errorf("search %q: %+v, want %s from %s", tc.query, hit, tc.wantID, tc.source)
		}
	}
	out, _ = mustRun(t, with(cfg, "kb", "search", "--kb", "science", "glaciers", "valleys")...)
	if !strings.Contains(out, "RANK") || !strings.Contains(out, "g1") || !strings.Contains(out, "Glaciers: Glaciers carve") {
		t.Errorf("search table: %q", out)
	}
	// Hybrid without an embedder says it fell back.
	out, errOut = mustRun(t, with(cfg, "kb", "search", "--kb", "science", "--kb", "other", "--mode", "hybrid", "magma")...)
	if !strings.Contains(errOut, "note:") || !strings.Contains(out, "v1") {
		t.Errorf("hybrid search: stdout %q stderr %q", out, errOut)
	}
	out, _ = mustRun(t, with(cfg, "kb", "search", "--kb", "science", "zeppelin")...)
	if !strings.Contains(out, "no hits") {
		t.Errorf("no-hit search: %q", out)
	}

	mustRun(t, with(cfg, "kb", "delete", "science")...)
	if code, _, errOut := run(t, with(cfg, "kb", "search", "--kb", "science", "magma")...); code == 0 || !strings.Contains(errOut, `"science"`) {
		t.Errorf("search of a deleted base: exit %d, %q", code, errOut)
	}
}

func TestKBIngestReportsFailedFiles(t *testing.T) {
	dir, cfg := kbConfig(t)
	writeFiles(t, dir, map[string]string{
		"good.txt":   "Capybaras are the largest rodents.",
		"broken.pdf": "%PDF-1.7\nnot a pdf at all\n%%EOF",
	})
	mustRun(t, with(cfg, "kb", "create", "zoo")...)
	code, out, errOut := run(t, with(cfg, "kb", "ingest", "--kb", "zoo", filepath.Join(dir, "good.txt"), filepath.Join(dir, "broken.pdf"))...)
	if code == 0 {
		t.Fatalf("a failed file must fail the command: %q", out)
	}
	if !strings.Contains(errOut, "1 of 2 files failed: broken.pdf") || !strings.Contains(errOut, "broken.pdf: FAILED") {
		t.Errorf("stderr %q: want the failed file named", errOut)
	}
	if !strings.Contains(out, "ingested 1 files into zoo: 1 documents, 1 chunks, 1 failed") {
		t.Errorf("summary %q", out)
	}
	out, _ = mustRun(t, with(cfg, "kb", "search", "--kb", "zoo", "capybaras")...)
	if !strings.Contains(out, "good.txt#0") {
		t.Errorf("the good file was not indexed: %q", out)
	}
}

func TestKBBadInput(t *testing.T) {
	dir, cfg := kbConfig(t)
	writeFiles(t, dir, map[string]string{"a.txt": "alpha", "q.tsv": "1\talpha\n", "qrels.txt": "1 0 a.txt#0 1\n", "bad-qrels.txt": "1 a.txt#0 1\n"})
	mustRun(t, with(cfg, "kb", "create", "docs")...)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad name", []string{"kb", "create", "two words"}, "use only letters"},
		{"ingest unknown kb", []string{"kb", "ingest", "--kb", "nosuch", filepath.Join(dir, "a.txt")}, `"nosuch" does not exist`},
		{"ingest without --kb", []string{"kb", "ingest", filepath.Join(dir, "a.txt")}, "--kb is required"},
		{"ingest missing file", []string{"kb", "ingest", "--kb", "docs", filepath.Join(dir, "missing.txt")}, "missing.txt: no such file"},
		{"search unknown kb", []string{"kb", "search", "--kb", "docs", "--kb", "nosuch", "alpha"}, `"nosuch"`},
		{"search bad mode", []string{"kb", "search", "--kb", "docs", "--mode", "fuzzy", "alpha"}, `--mode: kb: mode "fuzzy" is unknown`},
		{"vector without embedder", []string{"kb", "search", "--kb", "docs", "--mode", "vector", "alpha"}, "set search.embedder"},
		{"search bad top-k", []string{"kb", "search", "--kb", "docs", "--top-k", "0", "alpha"}, "--top-k"},
		{"search without query", []string{"kb", "search", "--kb", "docs"}, "requires at least 1 arg"},
		{"delete unknown", []string{"kb", "delete", "nosuch"}, `"nosuch"`},
		{"unknown workspace", []string{"kb", "search", "--workspace", "ghost", "--kb", "docs", "alpha"}, `workspace "ghost" does not exist`},
		{"eval missing queries", []string{"kb", "eval", "--kb", "docs", "--queries", filepath.Join(dir, "nope.tsv"), "--qrels", filepath.Join(dir, "qrels.txt")}, "nope.tsv: no such file"},
		{"eval bad qrels", []string{"kb", "eval", "--kb", "docs", "--queries", filepath.Join(dir, "q.tsv"), "--qrels", filepath.Join(dir, "bad-qrels.txt")}, "want 4 fields"},
		{"eval without qrels", []string{"kb", "eval", "--kb", "docs", "--queries", filepath.Join(dir, "q.tsv")}, "--qrels are required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := run(t, with(cfg, tc.args...)...)
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want non-zero and %q", code, errOut, tc.want)
			}
		})
	}
}

// TestKBEval checks the printed metrics on a collection small enough to
// score by hand.
func TestKBEval(t *testing.T) {
	dir, cfg := kbConfig(t)
	writeFiles(t, dir, map[string]string{
		"corpus.jsonl": `{"_id":"d1","text":"apple banana"}
{"_id":"d2","text":"apple cherry"}
{"_id":"d3","text":"grape melon"}
{"_id":"d4","text":"cherry grape grape melon kiwi"}
`,
		"queries.tsv": "q1\tbanana\nq2\tcherry\nq3\tkiwi\n",
		// q3 has no judgments: it is run but not scored.
		"qrels.txt": "q1 0 d1 1\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d2 0\n",
	})
	mustRun(t, with(cfg, "kb", "create", "tiny")...)
	mustRun(t, with(cfg, "kb", "ingest", "--kb", "tiny", filepath.Join(dir, "corpus.jsonl"))...)
	runFile := filepath.Join(dir, "run.trec")
	out, _ := mustRun(t, with(cfg, "kb", "eval", "--kb", "tiny", "--queries", filepath.Join(dir, "queries.tsv"),
		"--qrels", filepath.Join(dir, "qrels.txt"), "--run-out", runFile, "--mode", "fulltext")...)
	// q1 "banana" retrieves only d1 (relevant); d3 (relevant) is missed:
	//   nDCG@10 = 1 / (1 + 1/log2 3) = 0.61315, AP = 1/2, R@100 = 1/2.
	// q2 "cherry" retrieves d2 (shorter, so first; judged 0) then d4:
	//   nDCG@10 = (1/log2 3) / 1 = 0.63093, AP = 1/2, R@100 = 1.
	// Means: nDCG@10 0.6220, MAP 0.5000, R@100 0.7500.
	m := metrics(t, out)
	for name, want := range map[string]string{"nDCG@10": "0.6220", "MAP": "0.5000", "Recall@100": "0.7500"} {
		if m[name] != want {
			t.Errorf("%s = %q, want %s\n%s", name, m[name], want, out)
		}
	}
	if !strings.Contains(out, "2 judged of 3 run") {
		t.Errorf("query counts: %q", out)
	}
	f, err := os.Open(runFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		got = append(got, fs[0]+":"+fs[2]+":"+fs[3])
	}
	want := "q1:d1:1 q2:d2:1 q2:d4:2 q3:d4:1"
	if strings.Join(got, " ") != want {
		t.Errorf("run file %v, want %s", got, want)
	}
}

// metrics parses the "NAME  VALUE" lines kb eval prints.
func metrics(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			m[f[0]] = f[1]
		}
	}
	return m
}

// TestKBSciFact ingests the SciFact corpus through the command line and
// checks the published BM25 quality is reached (Anserini flat 0.679).
func TestKBSciFact(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("-short or -race: skipping the SciFact run")
	}
	data := eval.DataDir()
	if data == "" {
		t.Skip("no IR data: set AGENTCRAFT_IR_DATA to the directory holding scifact/")
	}
	sci := filepath.Join(data, "scifact")
	if _, err := os.Stat(filepath.Join(sci, "corpus.jsonl")); err != nil {
		t.Skipf("no SciFact corpus in %s", sci)
	}
	_, cfg := kbConfig(t)
	mustRun(t, with(cfg, "kb", "create", "scifact")...)
	out, _ := mustRun(t, with(cfg, "kb", "ingest", "--kb", "scifact", filepath.Join(sci, "corpus.jsonl"))...)
	if !strings.Contains(out, "5183 documents") {
		t.Errorf("ingest: %q", out)
	}
	t.Log(strings.TrimSpace(out))
	out, _ = mustRun(t, with(cfg, "kb", "eval", "--kb", "scifact", "--queries", filepath.Join(sci, "queries.test.tsv"),
		"--qrels", filepath.Join(sci, "qrels.test.txt"))...)
	t.Log("\n" + out)
	ndcg, err := strconv.ParseFloat(metrics(t, out)["nDCG@10"], 64)
	if err != nil {
		t.Fatalf("no nDCG@10 in %q", out)
	}
	if ndcg < 0.679 {
		t.Errorf("SciFact nDCG@10 = %.4f, below the published BM25 0.679", ndcg)
	}
}
